// The server's own log: one JSON object per line on stdout (pino), `{level, time, msg, ...fields}`.
// What goes in a line is already masked: run records, errors and step output are masked where
// they are made, and nothing here adds a secret (a line names runs, steps, routes and files).
import { pino, type Logger } from 'pino';
import { createLogger, type LogSink } from './logger-options.ts';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Where the lines go: stdout, written asynchronously a line at a time, so that a busy server does
 * not wait on its log (`flushLog` at shutdown writes what is pending). `setLogSink` redirects it.
 */
const stdout = pino.destination({ dest: 1, sync: false });
let sink: LogSink = stdout;
let stderr: ReturnType<typeof pino.destination> | undefined;
/** The file descriptor the lines go to: pool workers are told it as they start (pool.ts). */
let descriptor: 1 | 2 = 1;

/** The main thread's logger; a pool worker has its own (worker-log.ts). */
export const log: Logger = createLogger(pino, { write: (line: string) => sink.write(line) });

/** Sends the log's lines to `next` (an embedder's stream, a test) until the returned function is called. */
export function setLogSink(next: LogSink): () => void {
  const previous = sink;
  sink = next;
  return () => {
    sink = previous;
  };
}

/**
 * The log on stderr instead of stdout: for the troupe command, whose stdout is its output (a verb's
 * `--json` is read by programs). Set before the engine opens, so that its workers log there too.
 */
export function logToStderr(): void {
  stderr ??= pino.destination({ dest: 2, sync: true });
  sink = stderr;
  descriptor = 2;
}

/** Where the log's lines go: 1 (stdout) or 2 (stderr). */
export function logDescriptor(): 1 | 2 {
  return descriptor;
}

export function setLogLevel(level: LogLevel): void {
  log.level = level;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Writes what is pending: called before the process ends. */
export function flushLog(): void {
  try {
    stdout.flushSync();
  } catch {
    // stdout closed, or nothing written yet: nothing to flush
  }
}

/** An error's message for a log line. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// The server's own log: one JSON object per line on stdout (pino), `{level, time, msg, ...fields}`,
// or on a terminal one text line each (logFormat). What goes in a line is already masked: run
// records, errors and step output are masked where they are made, and nothing here adds a secret
// (a line names runs, steps, routes and files); text lines print the same values.
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { createLogger, textLines, type LogSink } from './logger-options.ts';

import type { LogFormat, LogLevel } from './log-settings.ts';

export { LOG_FORMATS, LOG_LEVELS, isLogFormat, isLogLevel, type LogFormat, type LogLevel } from './log-settings.ts';

/**
 * Where the lines go: stdout, written asynchronously a line at a time, so that a busy server does
 * not wait on its log (`flushLog` at shutdown writes what is pending). `setLogSink` redirects it.
 */
const stdout = pino.destination({ dest: 1, sync: false });
let stderr: ReturnType<typeof pino.destination> | undefined;
/** The file descriptor the lines go to: pool workers are told it as they start (pool.ts). */
let descriptor: 1 | 2 = 1;
let format: LogFormat = 'auto';
let text = false;
/** What the descriptor gets: the JSON destination, or the text stream in front of it. */
let target: LogSink = stdout;
/** An embedder's stream or a test's (setLogSink): it gets the JSON lines whatever the format. */
let custom: LogSink | undefined;
// One variable read per line: the format is settled when it is set, never asked per line.
let sink: LogSink = stdout;

/** The main thread's logger; a pool worker has its own (worker-log.ts). */
export const log: Logger = createLogger(pino, { write: (line: string) => sink.write(line) });

/** Sends the log's lines to `next` (an embedder's stream, a test) until the returned function is called. */
export function setLogSink(next: LogSink): () => void {
  const previous = custom;
  custom = next;
  sink = next;
  return () => {
    custom = previous;
    sink = custom ?? target;
  };
}

/**
 * The log on stderr instead of stdout: for the troupe command, whose stdout is its output (a verb's
 * `--json` is read by programs). Set before the engine opens, so that its workers log there too.
 */
export function logToStderr(): void {
  descriptor = 2;
  retarget();
}

/** JSON lines, text lines, or text only when the log goes to a terminal. Set before the engine opens (its workers follow it). */
export function setLogFormat(next: LogFormat): void {
  format = next;
  retarget();
}

/** Whether the log's lines are text (pool workers are told it as they start). */
export function logIsText(): boolean {
  return text;
}

function retarget(): void {
  text = format === 'text' || (format === 'auto' && isatty(descriptor));
  if (text) {
    // JSON lines still pending on stdout go before the first text line.
    flushLog();
    // Written synchronously: a terminal is read by a person, and no line is left pending at exit.
    target = textTargets[descriptor] ??= textLines(loadPretty(), descriptor === 1 ? pino.destination({ dest: 1, sync: true }) : stderrSync(), useColor(descriptor));
  } else {
    target = descriptor === 1 ? stdout : stderrSync();
  }
  sink = custom ?? target;
}

const textTargets: Partial<Record<1 | 2, LogSink>> = {};

function stderrSync(): LogSink {
  return (stderr ??= pino.destination({ dest: 2, sync: true }));
}

/** Colours on a terminal, unless NO_COLOR says otherwise (no-color.org). */
function useColor(fd: 1 | 2): boolean {
  return isatty(fd) && !process.env.NO_COLOR;
}

// Loaded only by a process that logs text: pino-pretty and its dependencies take a while to load.
function loadPretty(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/** Where the log's lines go: 1 (stdout) or 2 (stderr). */
export function logDescriptor(): 1 | 2 {
  return descriptor;
}

export function setLogLevel(level: LogLevel): void {
  log.level = level;
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

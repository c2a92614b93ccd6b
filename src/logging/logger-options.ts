// How every thread's pino logger is made, and its text lines for a terminal; pino and pino-pretty
// are passed in, so that a pool worker loads them only when it first logs (worker-log.ts) and a
// process that logs JSON never loads pino-pretty.
import type { Logger, pino } from 'pino';
import type PinoPretty from 'pino-pretty';

/** What log lines are written to: one JSON line per call. */
export interface LogSink {
  write(line: string): unknown;
}

/** The logger every thread makes with pino: level labels and ISO times, no pid or host per line. */
export function createLogger(make: typeof pino, destination: LogSink): Logger {
  return make(
    {
      level: 'info',
      base: undefined,
      timestamp: make.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

// A message is printed as it is in a text line (fields are JSON): a control character in it (a
// newline, a terminal escape from an error's text) would forge a line or steer the terminal.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * The JSON lines turned into one text line each, written to `destination` as they come: local time,
 * level, message, then the fields as JSON.
 */
export function textLines(pretty: typeof PinoPretty, destination: LogSink, colorize: boolean): LogSink {
  const format = pretty.prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    // An `error` field is a message here, printed as the other fields (not as a stack block).
    errorLikeObjectKeys: [],
    messageFormat: (line, key) => String(line[key] ?? '').replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
  });
  return { write: (line: string) => destination.write(format(line)) };
}

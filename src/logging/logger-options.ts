// How every thread's pino logger is made; pino itself is passed in, so that a pool worker can load
// it only when it first logs (worker-log.ts).
import type { Logger, pino } from 'pino';

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

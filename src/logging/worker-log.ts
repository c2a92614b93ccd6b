// The log of a pool worker thread, which logs rarely (a log file it cannot write, a container it
// cannot remove): pino is loaded by the first line, not by every thread as it starts (~25 ms).
import type { Logger } from 'pino';
import { createLogger } from './logger-options.ts';

let logger: Promise<Logger> | undefined;

export function workerLog(level: 'warn' | 'error', fields: Record<string, unknown>, message: string): void {
  logger ??= import('pino').then(({ pino }) => createLogger(pino, pino.destination({ dest: 1, sync: false })));
  void logger.then((log) => log[level](fields, message), () => console.error(`troupe: ${message}`, fields));
}

// The log of a pool worker thread, which logs rarely (a log file it cannot write, a container it
// cannot remove): pino is loaded by the first line, not by every thread as it starts (~25 ms).
import type { Logger } from 'pino';
import { createLogger } from './logger-options.ts';

let logger: Promise<Logger> | undefined;
/** stdout, or stderr where the main thread logs there (the troupe command): set as the worker starts. */
let descriptor: 1 | 2 = 1;

export function setWorkerLogDescriptor(fd: 1 | 2): void {
  descriptor = fd;
}

export function workerLog(level: 'warn' | 'error', fields: Record<string, unknown>, message: string): void {
  logger ??= import('pino').then(({ pino }) => createLogger(pino, pino.destination({ dest: descriptor, sync: false })));
  void logger.then((log) => log[level](fields, message), () => console.error(`troupe: ${message}`, fields));
}

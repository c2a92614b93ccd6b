// The log of a pool worker thread, which logs rarely (a log file it cannot write, a container it
// cannot remove): pino is loaded by the first line, not by every thread as it starts (~25 ms).
import type { Logger } from 'pino';
import { createLogger, textLines } from './logger-options.ts';

let logger: Promise<Logger> | undefined;
/** stdout, or stderr where the main thread logs there (the troupe command): set as the worker starts. */
let descriptor: 1 | 2 = 1;
/** Text lines where the main thread writes them (logFormat): set as the worker starts. */
let text = false;

export function setWorkerLogDescriptor(fd: 1 | 2, asText = false): void {
  descriptor = fd;
  text = asText;
}

export function workerLog(level: 'warn' | 'error', fields: Record<string, unknown>, message: string): void {
  logger ??= make();
  void logger.then((log) => log[level](fields, message), () => console.error(`troupe: ${message}`, fields));
}

async function make(): Promise<Logger> {
  const { pino } = await import('pino');
  if (!text) return createLogger(pino, pino.destination({ dest: descriptor, sync: false }));
  const pretty = (await import('pino-pretty')).default;
  const { isatty } = await import('node:tty');
  return createLogger(pino, textLines(pretty, pino.destination({ dest: descriptor, sync: true }), isatty(descriptor) && !process.env.NO_COLOR));
}

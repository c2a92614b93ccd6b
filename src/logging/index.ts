export { LOG_LEVELS, errorText, flushLog, isLogLevel, log, logDescriptor, logToStderr, setLogLevel, setLogSink, type LogLevel } from './logger.ts';
export type { LogSink } from './logger-options.ts';
export { logRuns } from './run-lines.ts';
export { workerLog } from './worker-log.ts';

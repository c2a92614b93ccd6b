export { LOG_FORMATS, LOG_LEVELS, errorText, flushLog, isLogFormat, isLogLevel, log, logDescriptor, logIsText, logToStderr, setLogFormat, setLogLevel, setLogSink, type LogFormat, type LogLevel } from './logger.ts';
export type { LogSink } from './logger-options.ts';
export { logRuns } from './run-lines.ts';
export { workerLog } from './worker-log.ts';

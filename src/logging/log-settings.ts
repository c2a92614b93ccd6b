// The log's levels and formats as the configuration names them, apart from the logger itself, so
// that reading a configuration does not load pino.
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** json: JSON lines; text: a line for a person; auto: text when the log goes to a terminal. */
export const LOG_FORMATS = ['auto', 'json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

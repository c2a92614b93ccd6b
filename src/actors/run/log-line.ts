// Lines of the run log, in the key=value form Dagu writes.

export function logLine(at: number, level: 'INFO' | 'WARN' | 'ERROR', message: string, fields: Record<string, string | number>): string {
  let line = `time=${new Date(at).toISOString()} level=${level} msg=${quote(message)}`;
  for (const [key, value] of Object.entries(fields)) line += ` ${key}=${quote(String(value))}`;
  return line;
}

function quote(text: string): string {
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}

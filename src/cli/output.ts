// What verbs print: aligned tables on a terminal, JSON for scripts, times and durations readable.

export function isTerminal(): boolean {
  return process.stdout.isTTY === true;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  return all.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd()).join('\n');
}

/** A length of time as a person reads it: 850ms, 12.3s, 4m05s, 2h03m. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** From `start` to `end` (or to now while it runs); '-' before it starts. */
export function between(start: string, end: string): string {
  if (start === '') return '-';
  return duration((end === '' ? Date.now() : Date.parse(end)) - Date.parse(start));
}

export function time(iso: string): string {
  return iso === '' ? '-' : iso.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, '');
}

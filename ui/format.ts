// How times, durations and statuses read on the page.

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  // toLocaleString shows the browser's own time zone.
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatDuration(startIso: string, endIso: string): string {
  if (!startIso) return '—';
  const end = endIso ? Date.parse(endIso) : Date.now();
  const ms = end - Date.parse(startIso);
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function statusText(label: string): string {
  return label ? label.replace(/_/g, ' ') : 'unknown';
}

export const runStatuses: { value: number; label: string }[] = [
  { value: 0, label: 'not_started' },
  { value: 1, label: 'running' },
  { value: 2, label: 'failed' },
  { value: 3, label: 'aborted' },
  { value: 4, label: 'succeeded' },
  { value: 5, label: 'queued' },
  { value: 6, label: 'partially_succeeded' },
];

/** Run params arrive as JSON object text; shown as KEY=value pairs when they are. */
export function formatParams(params: string): string {
  if (!params) return '';
  try {
    const value = JSON.parse(params) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
    }
  } catch {
    // Not JSON: shown as it is.
  }
  return params;
}

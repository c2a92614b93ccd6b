// The few figures the System page shows, read from the Prometheus text of GET /metrics: a sample
// line is `name{label="value",...} number`; comment lines and other metrics are skipped.
import { ApiError } from './api';

export interface Sample { name: string; labels: Record<string, string>; value: number }

export function parseMetrics(text: string, wanted: ReadonlySet<string>): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)/.exec(line);
    if (!match || !wanted.has(match[1])) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2].replace(/\\(.)/g, '$1');
    samples.push({ name: match[1], labels, value: Number(match[4]) });
  }
  return samples;
}

/** GET /api/v2/metrics as text; a refusal becomes the same ApiError every other call gives. */
export async function fetchMetricsText(): Promise<string> {
  let response: Response;
  try {
    response = await fetch('/api/v2/metrics', { credentials: 'same-origin', headers: { Accept: 'text/plain' } });
  } catch (cause) {
    throw new ApiError(0, 'network_error', `The server cannot be reached (${(cause as Error).message}).`);
  }
  const text = await response.text();
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`.trim();
    let code = `http_${response.status}`;
    try {
      const document = JSON.parse(text) as { code?: string; message?: string };
      if (typeof document.message === 'string') message = document.message;
      if (typeof document.code === 'string') code = document.code;
    } catch {
      // Not the error document: the status says it.
    }
    throw new ApiError(response.status, code, message);
  }
  return text;
}

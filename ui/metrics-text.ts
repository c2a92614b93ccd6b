// The few figures the System page shows, read from the Prometheus text of GET /metrics: a sample
// line is `name{label="value",...} number`; comment lines and other metrics are skipped. No
// imports: the unit tests load it as it is.
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

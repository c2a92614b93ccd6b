// Go's duration text (`10s`, `1m30s`, `500ms`), as Dagu's fields take it: the `otel` timeout of a
// DAG and of the server's config.
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/** The duration in whole ms; undefined when the text is not a Go duration. */
export function goDurationMs(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return Math.round(total);
}

// The metrics text as Prometheus reads it: GET /api/v2/metrics scraped and parsed into samples
// and types, with a sum of the samples of a name (and labels) that fails when there is none; and
// the metrics the Grafana dashboard of docs/ queries.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkedFetch, type TestServer } from '../helpers.ts';

/** Served only with distributed dispatch (a Redis URL): test/metrics-workers.test.ts scrapes them. */
export const WORKER_METRICS = ['troupe_workers', 'troupe_worker_slots', 'troupe_worker_busy_slots', 'troupe_runs_on_workers'];

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
export function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      types.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return { samples, types };
}

export async function scrape(server: TestServer) {
  const response = await checkedFetch(`${server.base}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  const parsed = parseExposition(text);
  const value = (name: string, labels: Record<string, string> = {}) => {
    const found = parsed.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, v]) => sample.labels[key] === v));
    assert.ok(found.length > 0, `no ${name} ${JSON.stringify(labels)} in\n${text}`);
    return found.reduce((sum, sample) => sum + sample.value, 0);
  };
  return { ...parsed, text, value, contentType: response.headers.get('content-type') };
}

/** The metric names docs/grafana-dashboard.json queries (a histogram's _bucket, _sum and _count read as the histogram). */
export async function dashboardQueries(): Promise<Set<string>> {
  const dashboard = JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'docs', 'grafana-dashboard.json'), 'utf8'));
  const exprs: string[] = JSON.stringify(dashboard).match(/troupe_[a-z0-9_]+/g) ?? [];
  return new Set(exprs.map((name) => name.replace(/_(bucket|sum|count)$/, '')));
}

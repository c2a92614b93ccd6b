// Fills a home's store with many finished runs, fast, for measurements of the store at scale.
// Each DAG (a chain of five steps) first runs once for real on an engine opened on the home; every
// seeded run of it is that run's records again (summary, nodes, step views, spec) under a new id,
// attempt and time, written through LmdbRunStore.save in large batches (the writes of one turn
// commit in one transaction). Seeded runs have no log files and no events (the event log keeps a
// day; the real runs have both). Prints one JSON line: runs, seconds, the store's size.
//   node --import tsx bench/seed-runs.ts --home <dir> --runs <n> [--dags 50] [--days 90] [--retention-days 365]
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { attemptId, uuidv7, type RunRecord } from '../src/core/index.ts';
import { homePaths, openEngine } from '../src/main.ts';
import { LmdbRunStore } from '../src/store/index.ts';

/** Writes issued per turn: one transaction each (about 40 MB of pages at five nodes a run). */
const BATCH = 10_000;
const DAY_MS = 86_400_000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export function seedDagSpec(retentionDays: number): string {
  const steps = Array.from({ length: 5 }, (_, index) =>
    `  - name: step${index + 1}\n    command: echo step ${index + 1}\n${index > 0 ? `    depends: step${index}\n` : ''}`).join('');
  return `description: a seeded DAG of five steps\nhistRetentionDays: ${retentionDays}\nsteps:\n${steps}`;
}

/** `template` again as the run `dagRunId`, attempt `attempt`, created at `createdAtMs`: ids in paths and every time moved with it. */
export function cloneRun(template: RunRecord, dagRunId: string, attempt: string, createdAtMs: number): RunRecord {
  const shift = createdAtMs - template.createdAtMs;
  const swap = (value: unknown): unknown => {
    if (typeof value === 'string') {
      if (value === '') return value;
      if (ISO.test(value)) return new Date(Date.parse(value) + shift).toISOString();
      return value.replaceAll(template.dagRunId, dagRunId).replaceAll(template.attemptId, attempt);
    }
    if (Array.isArray(value)) return value.map(swap);
    if (value !== null && typeof value === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) copy[key] = key === 'step' ? inner : swap(inner);
      return copy;
    }
    return value;
  };
  return { ...(swap(template) as RunRecord), createdAtMs };
}

async function realRuns(home: string, names: string[]): Promise<Map<string, { record: RunRecord; spec: string }>> {
  const handle = await openEngine({ ...homePaths(home), home, maxThreads: 2 });
  try {
    const templates = new Map<string, { record: RunRecord; spec: string }>();
    for (const name of names) {
      const { dagRunId } = await handle.engine.startDag(name, {});
      await handle.engine.whenFinished(name, dagRunId);
      const record = handle.runs.get(name, dagRunId);
      const spec = handle.runs.getSpec(name, dagRunId);
      if (!record || spec === undefined) throw new Error(`the real run ${name}/${dagRunId} was not stored`);
      templates.set(name, { record, spec });
    }
    return templates;
  } finally {
    await handle.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    home: { type: 'string' }, runs: { type: 'string', default: '1000' }, dags: { type: 'string', default: '50' },
    days: { type: 'string', default: '90' }, 'retention-days': { type: 'string', default: '365' },
  } });
  if (!values.home) throw new Error('--home <dir> is required');
  const home = values.home;
  const total = Number(values.runs);
  const days = Number(values.days);
  const paths = homePaths(home);
  await mkdir(paths.dagsDir, { recursive: true });
  const names = Array.from({ length: Number(values.dags) }, (_, index) => `seed-${String(index).padStart(2, '0')}`);
  await Promise.all(names.map((name) => writeFile(join(paths.dagsDir, `${name}.yaml`), seedDagSpec(Number(values['retention-days'])))));
  const started = performance.now();
  const templates = await realRuns(home, names);
  const store = new LmdbRunStore(paths.dataDir);
  const nowMs = Date.now();
  // Spread evenly over the window, oldest first, a run every `step` ms, the DAGs taken in turn
  // with some busier than others (a third of the runs on the first five DAGs).
  const step = Math.max(1, Math.floor((days * DAY_MS) / total));
  const firstMs = nowMs - total * step - 60_000;
  for (let start = 0; start < total; start += BATCH) {
    const writes: Promise<void>[] = [];
    for (let index = start; index < Math.min(total, start + BATCH); index++) {
      const name = index % 3 === 0 ? names[index % 5] : names[index % names.length];
      const { record, spec } = templates.get(name)!;
      const createdAtMs = firstMs + index * step;
      const run = cloneRun(record, uuidv7(createdAtMs), attemptId(), createdAtMs);
      writes.push(store.save(run), store.saveSpec(name, run.dagRunId, spec));
    }
    await Promise.all(writes);
  }
  await store.close();
  const { size } = await stat(join(paths.dataDir, 'data.mdb'));
  console.log(JSON.stringify({ runs: total, realRuns: names.length, dags: names.length, days, seconds: Math.round((performance.now() - started) / 100) / 10, storeBytes: size }));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

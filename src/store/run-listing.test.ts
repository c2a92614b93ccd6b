// The listings that combine filters which no single index holds: a name with a status (the two
// indexes walked in step) and a run id (one read per name), against a model of the same runs, in
// a real store whose runs share creation times and mix names, statuses and sub DAG runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus, type ListPosition, type RunFilter, type RunRecord } from '../core/index.ts';
import { LmdbRunStore } from './lmdb-run-store.ts';

const NAMES = ['a', 'b', 'c-long', 'B'];
const STATUSES = [RunStatus.Succeeded, RunStatus.Failed, RunStatus.Aborted, RunStatus.Running];
const BASE_MS = 1_700_000_000_000;

/** A pseudo-random but fixed mix: names and statuses independent, several runs per millisecond. */
function record(index: number): RunRecord {
  const mix = (index * 2654435761) >>> 0;
  const name = NAMES[mix % NAMES.length];
  const status = STATUSES[(mix >>> 8) % 7 === 0 ? 1 : (mix >>> 4) % STATUSES.length];
  const createdAtMs = BASE_MS + Math.floor(index / 3);
  const sub = index % 11 === 0;
  const dagRunId = `id-${(mix % 97).toString(36)}-${index}`;
  const iso = new Date(createdAtMs).toISOString();
  return {
    name, dagRunId, attemptId: `a${index}`, rootDAGRunName: name, rootDAGRunId: sub ? 'root' : dagRunId,
    parentDAGRunName: sub ? name : '', parentDAGRunId: sub ? 'root' : '', status, queuedAt: '', startedAt: iso,
    finishedAt: iso, log: '', params: '', nodes: [], createdAtMs,
  };
}

const newestFirst = (a: ListPosition, b: ListPosition) =>
  b.createdAtMs - a.createdAtMs || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0) || (a.dagRunId < b.dagRunId ? 1 : -1);

const ids = (runs: Array<{ name: string; dagRunId: string }>) => runs.map(({ name, dagRunId }) => `${name}/${dagRunId}`);

describe('listings by a name and a status, and by a run id', () => {
  let dir: string;
  let store: LmdbRunStore;
  const records: RunRecord[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-listing-'));
    store = new LmdbRunStore(dir);
    for (let index = 0; index < 2000; index++) records.push(record(index));
    // The same id under two names, and a run whose status changed after its first write.
    records.push({ ...record(5000), name: 'a', dagRunId: 'shared' }, { ...record(5001), name: 'b', dagRunId: 'shared' });
    await Promise.all(records.map((run) => store.save(run)));
    const moved = { ...records[7], status: RunStatus.Failed };
    records[7] = moved;
    await store.save(moved);
  });

  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const model = (filter: RunFilter) => ids(records.filter((run) =>
    (filter.includeSubRuns || run.parentDAGRunId === '') && (filter.name === undefined || run.name === filter.name) &&
    (filter.status === undefined || run.status === filter.status) && (filter.dagRunId === undefined || run.dagRunId === filter.dagRunId) &&
    run.createdAtMs >= (filter.fromMs ?? 0) && run.createdAtMs <= (filter.toMs ?? Infinity)).sort(newestFirst));

  const filters: RunFilter[] = [
    ...NAMES.flatMap((name) => STATUSES.map((status) => ({ name, status }))),
    { name: 'a', status: RunStatus.Failed, fromMs: BASE_MS + 100, toMs: BASE_MS + 400 },
    { name: 'c-long', status: RunStatus.Running, includeSubRuns: true },
    { name: 'nobody', status: RunStatus.Failed },
    { dagRunId: 'shared' }, { dagRunId: 'shared', name: 'b' }, { dagRunId: record(42).dagRunId },
    { dagRunId: 'shared', toMs: record(5000).createdAtMs }, { dagRunId: 'nothing' }, { dagRunId: 'x'.repeat(3000) },
  ];

  it('answers every match, newest first, whole and a page at a time', () => {
    for (const filter of filters) {
      const expected = model(filter);
      assert.deepEqual(ids(store.summaries(filter).runs), expected, JSON.stringify(filter).slice(0, 80));
      const paged: string[] = [];
      let position: ListPosition | undefined;
      for (;;) {
        const page = store.summaries(filter, { limit: 7, ...(position ? { after: position } : {}) });
        paged.push(...ids(page.runs));
        if (!page.next) break;
        position = page.next;
      }
      assert.deepEqual(paged, expected, `paged ${JSON.stringify(filter).slice(0, 80)}`);
    }
    assert.ok(model({ name: 'a', status: RunStatus.Failed }).length > 20, 'the fixture mixes statuses within a name');
  });
});

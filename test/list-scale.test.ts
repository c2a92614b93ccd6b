// List endpoints over many DAGs and runs: GET /dags from the DAG catalog, GET /dag-runs from the
// run indexes (and its cursor). Runs are written through the store so that thousands exist at
// once; every assertion is made over HTTP against a model of the same runs and against the
// store's reading of whole records (the listing as it was before the indexes).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { RunStatus, type RunFilter, type RunRecord } from '../src/core/index.ts';
import { LmdbRunStore } from '../src/store/index.ts';
import { runSummary } from '../src/http/present.ts';
import { homePaths } from '../src/main.ts';
import { startTestServer, type TestServer } from './helpers.ts';

const BASE_MS = Date.UTC(2026, 0, 1);
const NAMES = ['alpha', 'beta', 'Gamma', 'delta-x', 'epsilon'];
const STATUSES = [RunStatus.Succeeded, RunStatus.Failed, RunStatus.Aborted, RunStatus.PartiallySucceeded, RunStatus.Succeeded];

/** A finished run as the engine stores one; every 7th is a sub DAG run, several share a creation time. */
function record(index: number, createdAtMs = BASE_MS + Math.floor(index / 3) * 1000): RunRecord {
  const name = NAMES[index % NAMES.length];
  const dagRunId = `run-${String(index).padStart(5, '0')}`;
  const sub = index % 7 === 0;
  const iso = new Date(createdAtMs).toISOString();
  return {
    name, dagRunId, attemptId: `a${index}`,
    rootDAGRunName: sub ? 'alpha' : name, rootDAGRunId: sub ? 'parent-run' : dagRunId,
    parentDAGRunName: sub ? 'alpha' : '', parentDAGRunId: sub ? 'parent-run' : '',
    status: STATUSES[index % STATUSES.length], queuedAt: '', startedAt: iso, finishedAt: iso,
    log: `/logs/${name}/${dagRunId}.log`, params: `{"i":"${index}"}`,
    nodes: [{ step: { name: 's1' }, status: 4, stdout: '', stderr: '', startedAt: iso, finishedAt: iso, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [] } as never],
    createdAtMs,
  };
}

/** Newest first: creation time, then name, then id, each descending (the order of every listing). */
const newestFirst = (a: RunRecord, b: RunRecord) =>
  b.createdAtMs - a.createdAtMs || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0) || (a.dagRunId < b.dagRunId ? 1 : -1);

function model(records: RunRecord[], filter: RunFilter): unknown[] {
  return records.filter((run) =>
    run.parentDAGRunId === '' &&
    (filter.name === undefined || run.name === filter.name) &&
    (filter.status === undefined || run.status === filter.status) &&
    (filter.fromMs === undefined || run.createdAtMs >= filter.fromMs) &&
    (filter.toMs === undefined || run.createdAtMs <= filter.toMs) &&
    (filter.dagRunId === undefined || run.dagRunId === filter.dagRunId))
    .sort(newestFirst).map(runSummary);
}

const RUNS = 3000;

describe('GET /dag-runs over thousands of runs', () => {
  let server: TestServer;
  const records: RunRecord[] = [];

  before(async () => {
    server = await startTestServer();
    for (let index = 0; index < RUNS; index++) records.push(record(index));
    // Issued in one turn: one transaction.
    await Promise.all(records.map((run) => server.troupe.runs.save(run)));
  });
  after(() => server.close());

  const second = (index: number) => Math.floor((BASE_MS + index * 1000) / 1000);
  const cases: Array<[string, RunFilter]> = [
    ['', {}],
    ['name=beta', { name: 'beta' }],
    ['name=Gamma&status=2', { name: 'Gamma', status: RunStatus.Failed }],
    ['status=4', { status: RunStatus.Succeeded }],
    ['status=6', { status: RunStatus.PartiallySucceeded }],
    ['status=1', { status: RunStatus.Running }],
    [`fromDate=${second(100)}`, { fromMs: second(100) * 1000 }],
    [`toDate=${second(200)}`, { toMs: second(200) * 1000 + 999 }],
    [`fromDate=${second(300)}&toDate=${second(310)}`, { fromMs: second(300) * 1000, toMs: second(310) * 1000 + 999 }],
    [`status=3&fromDate=${second(50)}&toDate=${second(700)}`, { status: RunStatus.Aborted, fromMs: second(50) * 1000, toMs: second(700) * 1000 + 999 }],
    [`name=delta-x&fromDate=${second(500)}`, { name: 'delta-x', fromMs: second(500) * 1000 }],
    ['dagRunId=run-00042', { dagRunId: 'run-00042' }],
    ['name=nobody', { name: 'nobody' }],
  ];

  it('answers every filter as the model and as the whole-record listing do', async () => {
    for (const [query, filter] of cases) {
      const listed = await server.call('GET', `/dag-runs?${query}`);
      assert.equal(listed.status, 200, query);
      assert.equal(listed.body.nextCursor, undefined, query);
      assert.deepEqual(listed.body.dagRuns, model(records, filter), query);
      assert.deepEqual(listed.body.dagRuns, server.troupe.runs.list(filter).map(runSummary), query);
    }
    const byPath = await server.call('GET', '/dag-runs/epsilon?status=4');
    assert.deepEqual(byPath.body.dagRuns, model(records, { name: 'epsilon', status: RunStatus.Succeeded }));
  });

  it('pages with limit and cursor through the same runs, for every filter', async () => {
    for (const [query, filter] of cases) {
      const seen: unknown[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await server.call('GET', `/dag-runs?${query}&limit=97${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200, query);
        assert.ok(page.body.dagRuns.length <= 97, query);
        seen.push(...page.body.dagRuns);
        cursor = page.body.nextCursor;
        if (cursor === undefined) break;
        assert.equal(page.body.dagRuns.length, 97, query);
      }
      assert.deepEqual(seen, model(records, filter), query);
    }
  });

  it('shows a status change at once, and in the new status only', async () => {
    const changed = { ...records[1], status: RunStatus.Failed };
    await server.troupe.runs.save(changed);
    records[1] = changed;
    for (const status of [RunStatus.Failed, RunStatus.Succeeded]) {
      const listed = await server.call('GET', `/dag-runs?status=${status}`);
      assert.deepEqual(listed.body.dagRuns, model(records, { status }), String(status));
    }
  });

  it('covers every run exactly once while new runs arrive between pages', async () => {
    const before = new Set(model(records, {}).map((run: any) => run.dagRunId as string));
    const seen: string[] = [];
    let cursor: string | undefined;
    let added = 0;
    for (;;) {
      const page = await server.call('GET', `/dag-runs?limit=250${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      seen.push(...page.body.dagRuns.map((run: any) => run.dagRunId));
      cursor = page.body.nextCursor;
      if (cursor === undefined) break;
      // Newer runs, and one created at the very time of the page's last run.
      const last = page.body.dagRuns.at(-1);
      const fresh = [record(RUNS + 1000 + added * 2, Date.now()), { ...record(RUNS + 1001 + added * 2, Date.parse(last.startedAt)), name: 'zeta' }];
      added++;
      await Promise.all(fresh.map((run) => server.troupe.runs.save(run)));
    }
    assert.equal(new Set(seen).size, seen.length, 'no run twice');
    for (const id of before) assert.ok(seen.includes(id), `${id} listed`);
    assert.ok(added > 5);
  });

  it('refuses a limit out of range and a cursor it did not give', async () => {
    const good = (await server.call('GET', '/dag-runs?limit=2')).body.nextCursor as string;
    assert.ok(good);
    for (const query of ['limit=0', 'limit=501', 'limit=ten', 'limit=-1', 'limit=2&cursor=nope!', 'limit=2&cursor=WzEsMl0',
      `limit=2&cursor=${Buffer.from('[1,"x","a","b"]').toString('base64url')}`, `cursor=${good}`]) {
      const refused = await server.call('GET', `/dag-runs?${query}`);
      assert.deepEqual([refused.status, refused.body.code], [400, 'bad_request'], query);
    }
    const last = await server.call('GET', '/dag-runs?limit=500');
    assert.equal(last.body.dagRuns.length, 500);
  });
});

describe('the status index of a store written before it existed', () => {
  it('is built when the store is opened', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-list-'));
    const { dataDir } = homePaths(home);
    const store = new LmdbRunStore(dataDir);
    const records = Array.from({ length: 50 }, (_, index) => record(index));
    await Promise.all(records.map((run) => store.save(run)));
    await store.close();
    // What an older build left: runs and no status rows.
    const root = open({ path: dataDir, maxDbs: 16 });
    await root.openDB({ name: 'runs-by-status' }).clearAsync();
    await root.openDB({ name: 'flags' }).remove(['index-built', 'runs-by-status']);
    await root.close();
    const server = await startTestServer('uws', { home });
    try {
      const listed = await server.call('GET', '/dag-runs?status=2');
      assert.ok(listed.body.dagRuns.length > 0);
      assert.deepEqual(listed.body.dagRuns, model(records, { status: RunStatus.Failed }));
    } finally {
      await server.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});

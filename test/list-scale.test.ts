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

/** Yesterday's midnight (UTC): recent enough that no retention sweep (30 days by default) removes them. */
const BASE_MS = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 86_400_000;
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

  it('refuses a limit out of range (above 1,000, as Dagu) and a cursor it did not give', async () => {
    const good = (await server.call('GET', '/dag-runs?limit=2')).body.nextCursor as string;
    assert.ok(good);
    for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'limit=-1', 'limit=2&cursor=nope!', 'limit=2&cursor=WzEsMl0',
      `limit=2&cursor=${Buffer.from('[1,"x","a","b"]').toString('base64url')}`, `cursor=${good}`]) {
      const refused = await server.call('GET', `/dag-runs?${query}`);
      assert.deepEqual([refused.status, refused.body.code], [400, 'bad_request'], query);
    }
    const largest = await server.call('GET', '/dag-runs?limit=1000');
    assert.equal(largest.status, 200);
    assert.equal(largest.body.dagRuns.length, 1000);
    assert.deepEqual(largest.body.dagRuns, (await server.call('GET', '/dag-runs')).body.dagRuns.slice(0, 1000));
    assert.ok(largest.body.nextCursor);
  });
});

describe('the status index of a store written before it existed', () => {
  it('is built when the store is opened', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-list-'));
    const { dataDir } = homePaths(home);
    const store = new LmdbRunStore(dataDir);
    // Recent (BASE_MS): the retention sweep at start would remove runs older than 30 days.
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

const DAG_FILES = 60;
const SUMMARY_KEYS = ['name', 'group', 'schedule', 'description', 'params', 'defaultParams', 'tags'] as const;

function dagText(index: number): string {
  const schedule = index % 3 === 0 ? `schedule: "${index % 60} ${index % 24} * * *"\n` : '';
  const group = index % 4 === 0 ? `group: g${index % 8}\n` : '';
  const params = index % 5 === 0 ? 'params:\n  - WHO: w\n' : '';
  const steps = index % 11 === 10 ? 'steps: [' : 'steps:\n  - echo hi\n';
  return `description: dag ${index}\ntags: [t${index % 6}, Shared]\n${schedule}${group}${params}${steps}`;
}

describe('GET /dags over many DAG files', () => {
  let server: TestServer;
  const fileNames = Array.from({ length: DAG_FILES }, (_, index) => `${index % 2 ? 'Dag' : 'dag'}-${String(index).padStart(3, '0')}`);

  before(async () => {
    server = await startTestServer();
    // Through the API, so that the scheduler has read each before the first listing (nextRun);
    // those that do not parse by hand, as the API refuses them.
    for (const [index, fileName] of fileNames.entries()) {
      if (index % 11 === 10) await server.writeDag(fileName, dagText(index));
      else assert.equal((await server.call('POST', '/dags', { name: fileName, spec: dagText(index) })).status, 201);
    }
  });
  after(() => server.close());

  /** A list item as the DAG's own endpoint tells it: its summary fields, schedule and problems. */
  async function expectedItem(fileName: string) {
    const details = (await server.call('GET', `/dags/${fileName}`)).body;
    return {
      fileName,
      dag: details.errors.length > 0 && details.dag.steps === undefined
        ? { name: fileName, group: '', schedule: [], description: '', params: [], defaultParams: '', tags: [] }
        : Object.fromEntries(SUMMARY_KEYS.map((key) => [key, details.dag[key]])),
      suspended: details.suspended,
      nextRun: details.nextRun,
      errors: details.errors,
    };
  }

  async function everyItem(query: string): Promise<any[]> {
    const items: any[] = [];
    for (let page = 1; ; page++) {
      const listed = await server.call('GET', `/dags?perPage=7&page=${page}${query}`);
      assert.equal(listed.status, 200, query);
      items.push(...listed.body.dags);
      if (listed.body.pagination.nextPage === null) {
        assert.equal(items.length, listed.body.pagination.totalRecords, query);
        return items;
      }
    }
  }

  const collator = new Intl.Collator();
  const byName = (a: string, b: string) => collator.compare(a.toLowerCase(), b.toLowerCase());

  it('lists every file as its own endpoints describe it, in every order and filter', async () => {
    const all = await everyItem('');
    assert.deepEqual(all.map((item) => item.fileName), [...fileNames].sort(byName));
    for (const item of all) {
      const expected = await expectedItem(item.fileName);
      assert.deepEqual(item.dag, expected.dag, item.fileName);
      assert.deepEqual([item.suspended, item.nextRun, item.errors], [expected.suspended, expected.nextRun, expected.errors], item.fileName);
      assert.equal(item.latestDAGRun.dagRunId, '', item.fileName);
    }
    const broken = (await server.call('GET', '/dags?perPage=1')).body.errors as string[];
    assert.deepEqual(broken.map((line) => line.split(':')[0]).sort(), fileNames.filter((_, index) => index % 11 === 10).sort());

    assert.deepEqual((await everyItem('&order=desc')).map((item) => item.fileName), [...fileNames].sort(byName).reverse());
    const t2 = fileNames.filter((_, index) => index % 11 !== 10 && index % 6 === 2);
    assert.deepEqual((await everyItem('&tag=T2')).map((item) => item.fileName), t2.sort(byName));
    assert.deepEqual((await everyItem('&name=DAG-01')).map((item) => item.fileName), fileNames.filter((name) => name.toLowerCase().includes('dag-01')).sort(byName));

    const scheduled = all.filter((item) => item.nextRun !== null);
    assert.ok(scheduled.length > 10);
    const soonest = [...scheduled].sort((a, b) => Date.parse(a.nextRun) - Date.parse(b.nextRun) || byName(a.fileName, b.fileName)).map((item) => item.fileName);
    const unscheduled = all.filter((item) => item.nextRun === null).map((item) => item.fileName);
    assert.deepEqual((await everyItem('&sort=nextRun')).map((item) => item.fileName), [...soonest, ...unscheduled]);
    assert.deepEqual((await everyItem('&sort=nextRun&order=desc')).map((item) => item.fileName), [...soonest.reverse(), ...unscheduled.reverse()]);
  });

  it('shows a file edited, added or removed by hand at the next request', async () => {
    await server.call('GET', '/dags?perPage=1000');
    await server.writeDag('dag-000', 'description: edited by hand, longer than before\ntags: [fresh]\nsteps:\n  - echo hi\n');
    await server.writeDag('added-by-hand', 'tags: [fresh]\nsteps:\n  - echo hi\n');
    await rm(join(server.home, 'dags', 'Dag-001.yaml'));
    const fresh = (await server.call('GET', '/dags?tag=fresh&perPage=1000')).body;
    assert.deepEqual(fresh.dags.map((item: any) => item.fileName), ['added-by-hand', 'dag-000']);
    assert.equal(fresh.dags[1].dag.description, 'edited by hand, longer than before');
    const every = (await server.call('GET', '/dags?perPage=1000')).body;
    assert.equal(every.pagination.totalRecords, DAG_FILES);
    assert.ok(!every.dags.some((item: any) => item.fileName === 'Dag-001'));
  });

  it('sees a file edited in place, off the page, once the directory watcher tells of it; a page shown is checked at once', async () => {
    const before = (await server.call('GET', '/dags?tag=inplace&perPage=1000')).body;
    assert.deepEqual(before.dags, []);
    // writeFile rewrites in place: the directory's list of entries does not move, only the watcher tells.
    await server.writeDag('dag-004', 'tags: [inplace]\nsteps:\n  - echo hi\n');
    let seen: string[] = [];
    for (let attempt = 0; attempt < 200 && seen.length === 0; attempt++) {
      seen = (await server.call('GET', '/dags?tag=inplace&perPage=1000')).body.dags.map((item: any) => item.fileName);
      if (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(seen, ['dag-004']);
    // Shown on a page, a file rewritten in place is listed as it now is at the next request.
    await server.writeDag('dag-004', 'description: rewritten\ntags: [inplace]\nsteps:\n  - echo hi\n');
    const shown = (await server.call('GET', '/dags?name=dag-004')).body.dags;
    assert.equal(shown[0].dag.description, 'rewritten');
    const tags = (await server.call('GET', '/dags/tags')).body.tags as string[];
    assert.ok(tags.includes('inplace'), tags.join(','));
  });

  it("shows a DAG's newest run that is not a sub DAG run, and its suspension", async () => {
    const run = { ...record(1, Date.now()), name: 'dag-002', dagRunId: 'newest' };
    const sub = { ...record(7, Date.now() + 1000), name: 'dag-002', dagRunId: 'sub-newer' };
    await Promise.all([server.troupe.runs.save(run), server.troupe.runs.save(sub)]);
    assert.equal((await server.call('POST', '/dags/dag-002/suspend', { suspend: true })).status, 200);
    const item = (await server.call('GET', '/dags?name=dag-002')).body.dags[0];
    assert.deepEqual(item.latestDAGRun, runSummary(run));
    assert.equal(item.suspended, true);
  });
});

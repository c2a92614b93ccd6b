// A store holding many finished runs: the server's start settles the one run a crash left running
// among them (found by the status index), and a cleanup of thousands of old runs removes exactly
// those, batch after batch, while the server goes on answering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStatus, RunStatus, type RunRecord } from '../src/core/index.ts';
import { LmdbRunStore } from '../src/store/index.ts';
import { homePaths } from '../src/main.ts';
import { startTestServer } from './helpers.ts';

const DAY_MS = 86_400_000;
const NAMES = ['scale-a', 'scale-b', 'scale-c'];

/** A run as the engine stores one, with two steps; a running one has its second step running. */
function run(index: number, createdAtMs: number, status: RunStatus = RunStatus.Succeeded): RunRecord {
  const name = NAMES[index % NAMES.length];
  const dagRunId = `run-${String(index).padStart(6, '0')}`;
  const iso = new Date(createdAtMs).toISOString();
  const done = status !== RunStatus.Running;
  const node = (step: string, nodeStatus: number) => ({
    step: { name: step, command: 'true' }, status: nodeStatus, stdout: '', stderr: '', startedAt: iso, finishedAt: nodeStatus === NodeStatus.Running ? '' : iso,
    retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
  });
  return {
    name, dagRunId, attemptId: `att${index}`, rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status, queuedAt: '', startedAt: iso, finishedAt: done ? iso : '', log: '', params: '{}', createdAtMs, fileName: name,
    nodes: [node('first', NodeStatus.Succeeded), node('second', done ? NodeStatus.Succeeded : NodeStatus.Running)] as never,
  };
}

/** A home whose DAGs keep a year of history (the sweep at start removes nothing) and hold `records`. */
async function seededHome(records: RunRecord[]): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'troupe-scale-'));
  const { dagsDir } = homePaths(home);
  await mkdir(dagsDir, { recursive: true });
  for (const name of NAMES) await writeFile(join(dagsDir, `${name}.yaml`), 'histRetentionDays: 365\nsteps:\n  - name: first\n    command: "true"\n');
  const store = new LmdbRunStore(homePaths(home).dataDir);
  for (let start = 0; start < records.length; start += 5000) await Promise.all(records.slice(start, start + 5000).map((record) => store.save(record)));
  await store.close();
  return home;
}

test('a run left running among 20,000 finished ones is settled at start; the finished ones are left as they were', async (t) => {
  const nowMs = Date.now();
  const records = Array.from({ length: 20_000 }, (_, index) => run(index, nowMs - DAY_MS + index * 1000));
  records.push(run(20_000, nowMs - DAY_MS + 10_500 * 1000, RunStatus.Running));
  const server = await startTestServer('uws', { home: await seededHome(records) });
  t.after(() => server.close());
  // Settled before the API opens.
  const settled = server.troupe.runs.get('scale-c', 'run-020000');
  assert.equal(settled?.status, RunStatus.Failed);
  assert.match(settled.error ?? '', /the server stopped while the run was active/);
  assert.deepEqual((await server.call('GET', '/dag-runs?status=1')).body.dagRuns, []);
  const succeeded = await server.call('GET', '/dag-runs?status=4&limit=1000');
  assert.equal(succeeded.body.dagRuns.length, 1000);
  assert.ok(succeeded.body.nextCursor);
  assert.equal(server.troupe.runs.get('scale-a', 'run-000000')?.status, RunStatus.Succeeded);
});

test('a cleanup of 6,000 old runs among 9,000 removes exactly the old ones, batch by batch, and the server answers meanwhile', async (t) => {
  const nowMs = Date.now();
  // 6,000 from 60 - 40 days ago, 3,000 from the last ten days.
  const old = Array.from({ length: 6000 }, (_, index) => run(index, nowMs - 60 * DAY_MS + index * 200_000));
  const recent = Array.from({ length: 3000 }, (_, index) => run(6000 + index, nowMs - 10 * DAY_MS + index * 200_000));
  const server = await startTestServer('uws', { home: await seededHome([...old, ...recent]) });
  t.after(() => server.close());
  const removedSeen: number[] = [];
  let answered = 0;
  let cleaning = true;
  // Each answer is the listing's newest page and the count of old runs left: it shows the removal
  // under way in steps, not at one commit.
  const watcher = (async () => {
    while (cleaning) {
      const health = await server.call('GET', '/health');
      assert.equal(health.status, 200);
      const left = await server.call('GET', `/dag-runs?toDate=${Math.floor((nowMs - 30 * DAY_MS) / 1000)}&limit=1000`);
      assert.equal(left.status, 200);
      removedSeen.push(left.body.dagRuns.length + (left.body.nextCursor ? 1 : 0));
      answered++;
    }
  })();
  const cleanup = await server.call('POST', '/dag-runs/cleanup', { retentionDays: 30 });
  cleaning = false;
  await watcher;
  assert.equal(cleanup.status, 200, cleanup.text);
  assert.equal(cleanup.body.removed, 6000);
  assert.deepEqual(new Set(cleanup.body.dagRuns.map((entry: any) => entry.dagRunId)), new Set(old.map((record) => record.dagRunId)));
  assert.ok(answered >= 2, `the server answered ${answered} times while it removed 6,000 runs`);
  // Some answer came while old runs were partly removed: the removal went in batches.
  assert.ok(removedSeen.some((count) => count > 0 && count <= 1000), JSON.stringify(removedSeen));
  const left: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await server.call('GET', `/dag-runs?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    left.push(...page.body.dagRuns.map((entry: any) => entry.dagRunId));
    cursor = page.body.nextCursor;
  } while (cursor);
  assert.deepEqual(left.sort(), recent.map((record) => record.dagRunId).sort());
  assert.equal(server.troupe.runs.get('scale-a', old[0].dagRunId), undefined);
});

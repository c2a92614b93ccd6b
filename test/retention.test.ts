// History retention on the real server: runs older than their DAG's histRetentionDays go, with
// their sub DAG runs and log files, when the retention sweep runs; newer runs and runs of DAGs that
// keep history longer stay. The server's clock is moved back to create the old runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Definitions } from '../src/catalog/index.ts';
import { RetentionSweeper } from '../src/scheduler/index.ts';
import { RunStatus, isoTime, systemClock, type RunRecord } from '../src/core/index.ts';
import { DagFiles, LmdbRunStore, RunHistory } from '../src/store/index.ts';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';

const DAY_MS = 86_400_000;

async function finishedRun(server: TestServer, fileName: string, dagRunId: string): Promise<any> {
  const started = await server.call('POST', `/dags/${fileName}/start`, { dagRunId });
  assert.equal(started.status, 200, started.text);
  const run = await server.waitForRun(fileName, dagRunId);
  assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
  // The run log is created as the run ends, just after its final record is durable.
  assert.ok(await waitUntil(() => existsSync(run.log)), run.log);
  return run;
}

/** The log files a run's details name: its run log and its steps' stdout and stderr. */
function logFilesOf(run: any): string[] {
  return [run.log, ...run.nodes.flatMap((node: any) => [node.stdout, node.stderr])].filter((path: string) => path !== '');
}

test('runs older than histRetentionDays are removed with their sub DAG runs and logs; the others stay', async (t) => {
  let offsetMs = -40 * DAY_MS;
  const server = await startTestServer('uws', { clock: { now: () => Date.now() + offsetMs } });
  t.after(() => server.close());
  await server.writeDag('ret-parent', 'steps:\n  - name: hello\n    command: echo parent\n  - name: sub\n    call: ret-leaf\n    depends: [hello]\n');
  await server.writeDag('ret-leaf', 'steps:\n  - name: leaf\n    command: echo leaf\n');
  await server.writeDag('ret-long', 'histRetentionDays: 60\nsteps:\n  - name: hello\n    command: echo long\n');
  await server.writeDag('ret-none', 'histRetentionDays: 0\nsteps:\n  - name: hello\n    command: echo none\n');

  // Forty days ago.
  const oldParent = await finishedRun(server, 'ret-parent', 'old-parent');
  const subRunId = oldParent.nodes[1].subRuns[0].dagRunId;
  const oldSub = (await server.call('GET', `/dag-runs/ret-parent/old-parent/sub-dag-runs/${subRunId}`)).body.dagRunDetails;
  assert.equal(oldSub.statusLabel, 'succeeded');
  assert.ok(await waitUntil(() => existsSync(oldSub.log)), oldSub.log);
  await finishedRun(server, 'ret-long', 'old-long');
  // The files that exist (a call step writes no output files of its own).
  const oldFiles = [...logFilesOf(oldParent), ...logFilesOf(oldSub)].filter((path) => existsSync(path));
  assert.ok([oldParent.log, oldParent.nodes[0].stdout, oldSub.log, oldSub.nodes[0].stdout].every((path) => oldFiles.includes(path)), JSON.stringify(oldFiles));

  // An hour ago: older than a retention of 0 days.
  offsetMs = -3_600_000;
  const recentNone = await finishedRun(server, 'ret-none', 'new-none');
  // Now.
  offsetMs = 0;
  const recentParent = await finishedRun(server, 'ret-parent', 'new-parent');
  const recentFiles = logFilesOf(recentParent).filter((path) => existsSync(path));
  const recentNoneFiles = logFilesOf(recentNone).filter((path) => existsSync(path));
  assert.ok(recentNoneFiles.includes(recentNone.log));

  const removed = await server.troupe.retention.sweep();
  // The old parent run and its sub run; with histRetentionDays 0 the finished run goes too.
  assert.equal(removed, 3);

  const parentRuns = await server.call('GET', '/dags/ret-parent/dag-runs');
  assert.equal(parentRuns.status, 200);
  assert.deepEqual(parentRuns.body.dagRuns.map((run: any) => run.dagRunId), ['new-parent']);
  const allRuns = await server.call('GET', '/dag-runs');
  const listed = allRuns.body.dagRuns.map((run: any) => run.dagRunId);
  assert.ok(!listed.includes('old-parent') && !listed.includes('new-none'), JSON.stringify(listed));
  assert.ok(listed.includes('new-parent') && listed.includes('old-long'), JSON.stringify(listed));
  assert.equal((await server.call('GET', '/dag-runs/ret-parent/old-parent')).status, 404);
  assert.equal((await server.call('GET', `/dag-runs/ret-parent/old-parent/sub-dag-runs/${subRunId}`)).status, 404);
  assert.equal((await server.call('GET', '/dag-runs/ret-none/new-none')).status, 404);
  assert.equal(server.troupe.runs.get('ret-leaf', subRunId), undefined);
  assert.deepEqual(server.troupe.runs.list({ includeSubRuns: true, name: 'ret-leaf' }).map((run) => run.parentDAGRunId), ['new-parent']);
  assert.deepEqual(oldFiles.filter((path) => existsSync(path)), []);
  assert.deepEqual(recentNoneFiles.filter((path) => existsSync(path)), []);
  assert.ok(recentFiles.includes(recentParent.log) && recentFiles.every((path) => existsSync(path)), JSON.stringify(recentFiles));
  assert.equal((await server.call('GET', '/dag-runs/ret-parent/new-parent/log')).status, 200);

  // A second sweep finds nothing more to remove.
  assert.equal(await server.troupe.retention.sweep(), 0);
});

test('the server sweeps history when it starts', async (t) => {
  let offsetMs = -40 * DAY_MS;
  const first = await startTestServer('uws', { clock: { now: () => Date.now() + offsetMs } });
  await first.writeDag('ret-start', 'steps:\n  - name: hello\n    command: echo old\n');
  const old = await finishedRun(first, 'ret-start', 'old-run');
  await first.troupe.close();
  offsetMs = 0;
  // The same home, opened again: its sweep at start finds the old run.
  const second = await startTestServer('node', { home: first.home, clock: { now: () => Date.now() + offsetMs } });
  t.after(() => second.close());
  // Sweeps run one after another: this one starts once the start's sweep is done, and finds nothing left.
  assert.equal(await second.troupe.retention.sweep(), 0);
  assert.equal((await second.call('GET', '/dag-runs/ret-start/old-run')).status, 404);
  assert.deepEqual((await second.call('GET', '/dags/ret-start/dag-runs')).body.dagRuns, []);
  assert.equal(existsSync(old.log), false);
});

test('the sweep comes back every interval: a run that expires while the server runs goes without a restart', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-retention-'));
  const runs = new LmdbRunStore(join(home, 'data'));
  const sweeper = new RetentionSweeper({ store: new RunHistory(runs), definitions: new Definitions(new DagFiles(join(home, 'dags'))), clock: systemClock, everyMs: 20 });
  t.after(async () => { await sweeper.close(); await runs.close(); await rm(home, { recursive: true, force: true }); });
  sweeper.start();
  const createdAtMs = Date.now() - 40 * DAY_MS;
  const record = (dagRunId: string, createdAt: number): RunRecord => ({
    name: 'ret-timer', dagRunId, attemptId: 'abcdef', rootDAGRunName: 'ret-timer', rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Succeeded, queuedAt: '', startedAt: isoTime(createdAt), finishedAt: isoTime(createdAt + 1000), log: '', params: '{}', nodes: [], createdAtMs: createdAt,
  });
  // Written after the sweep at start: only a later sweep can find it.
  await runs.save(record('expired', createdAtMs));
  await runs.save(record('kept', Date.now()));
  assert.ok(await waitUntil(() => runs.get('ret-timer', 'expired') === undefined), 'the periodic sweep did not remove the expired run');
  assert.equal(runs.get('ret-timer', 'kept')?.dagRunId, 'kept');
});

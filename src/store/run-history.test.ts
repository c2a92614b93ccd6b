import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { LmdbRunStore } from './lmdb-run-store.ts';
import { LogFiles } from './log-files.ts';
import { RunHistory } from './run-history.ts';

const DATABASES = ['runs', 'run-nodes', 'specs', 'runs-by-time', 'runs-by-name', 'run-steps'];

/** Keys per database, each as `name/dagRunId`, read from the closed store's files. */
function rowsIn(path: string): Record<string, string[]> {
  const root = open({ path, maxDbs: 8, readOnly: true });
  try {
    const rows: Record<string, string[]> = {};
    for (const name of DATABASES) {
      const db = root.openDB({ name });
      rows[name] = [...db.getKeys()].map((key) => {
        const parts = key as Array<string | number>;
        // runs-by-time: [createdAtMs, name, id]; runs-by-name: [name, createdAtMs, id]; the rest start [name, id].
        if (name === 'runs-by-time') return `${parts[1]}/${parts[2]}`;
        if (name === 'runs-by-name') return `${parts[0]}/${parts[2]}`;
        return `${parts[0]}/${parts[1]}`;
      });
    }
    return rows;
  } finally {
    void root.close();
  }
}

/** A finished run of `steps` steps whose files exist in the log folder, as the engine lays them out. */
async function storedRun(store: LmdbRunStore, logs: LogFiles, name: string, dagRunId: string, createdAtMs: number, extra: Partial<RunRecord> = {}): Promise<RunRecord> {
  const attemptId = 'b2c3d4';
  logs.prepare(name);
  const paths = ['build', 'test'].map((step, index) => logs.stepPaths(name, dagRunId, attemptId, index, step));
  const nodes: NodeRecord[] = paths.map((path, index) => ({
    step: { name: index === 0 ? 'build' : 'test', executorConfig: { config: {} } }, stdout: path.stdout, stderr: path.stderr,
    startedAt: '', finishedAt: '', status: NodeStatus.Succeeded, retryCount: 0, doneCount: 1, error: '', subRuns: [], subRunsRepeated: [],
  }));
  const record: RunRecord = {
    name, dagRunId, attemptId, rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Succeeded, queuedAt: '', startedAt: '', finishedAt: '', log: logs.runLogPath(name, dagRunId, attemptId),
    params: '{}', nodes, createdAtMs, ...extra,
  };
  await Promise.all([record.log, ...paths.flatMap((path) => [path.stdout, path.stderr, path.script])].map((file) => writeFile(file, 'x\n')));
  // An earlier attempt, which the record no longer names.
  await writeFile(logs.runLogPath(name, dagRunId, 'a1a1a1'), 'x\n');
  await writeFile(logs.stepPaths(name, dagRunId, 'a1a1a1', 1, 'test').stdout, 'x\n');
  await store.save(record);
  await store.saveSpec(name, dagRunId, 'steps: [{command: "true"}]');
  return record;
}

test('removing runs leaves no row in any database nor any log file of theirs, and keeps the others', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-history-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'data');
  await mkdir(dataDir);
  const logs = new LogFiles(join(dir, 'logs'));
  const store = new LmdbRunStore(dataDir);
  const old = await storedRun(store, logs, 'etl', 'r1', 1000, { children: { s1: 'load' } });
  const sub = await storedRun(store, logs, 'load', 's1', 1001, { rootDAGRunName: 'etl', rootDAGRunId: 'r1', parentDAGRunName: 'etl', parentDAGRunId: 'r1' });
  // Its id extends the removed run's: its files start with "r1." too, and must stay.
  await storedRun(store, logs, 'etl', 'r1.b2c3d4', 2000);
  await storedRun(store, logs, 'etl', 'r2', 3000);
  await storedRun(store, logs, 'load', 's2', 3001);
  const running = await storedRun(store, logs, 'etl', 'r0', 500, { status: RunStatus.Running });
  const history = new RunHistory(store);
  assert.deepEqual(history.runNames(), ['etl', 'load']);
  assert.deepEqual(history.runsCreatedBefore('etl', 2500, 10).map((run) => run.dagRunId), ['r0', 'r1', 'r1.b2c3d4']);
  assert.deepEqual(history.runsCreatedBefore('etl', 2500, 10, { createdAtMs: 1000, dagRunId: 'r1' }).map((run) => run.dagRunId), ['r1.b2c3d4']);
  const filesBefore = { etl: await readdir(logs.dagDir('etl')), load: await readdir(logs.dagDir('load')) };

  // An active run is refused even when asked for.
  assert.equal(await history.remover().removeRuns([sub, old, running]), 2);
  assert.equal(store.get('etl', 'r1'), undefined);
  assert.equal(store.get('load', 's1'), undefined);
  assert.equal(store.getSpec('etl', 'r1'), undefined);
  assert.deepEqual(store.listByName('etl', 10).map((run) => run.dagRunId), ['r2', 'r1.b2c3d4', 'r0']);
  assert.deepEqual(store.list({ includeSubRuns: true }).map((run) => run.dagRunId), ['s2', 'r2', 'r1.b2c3d4', 'r0']);
  const filesAfter = { etl: (await readdir(logs.dagDir('etl'))).sort(), load: (await readdir(logs.dagDir('load'))).sort() };
  assert.deepEqual(filesAfter.load, filesBefore.load.filter((file) => !file.startsWith('s1.')).sort());
  // r1's files, of both attempts, are gone; r1.b2c3d4's (which begin with "r1.b2c3d4." as well) stay.
  assert.deepEqual(filesAfter.etl, filesBefore.etl.filter((file) => !file.startsWith('r1.') || /^r1\.b2c3d4\.[0-9a-f]{6}\./.test(file)).sort());
  // Every file of a removed run went: seven of its last attempt and two of an earlier one, each.
  assert.equal(filesBefore.load.length - filesAfter.load.length, 9);
  assert.equal(filesBefore.etl.length - filesAfter.etl.length, 9);
  await store.close();

  const rows = rowsIn(dataDir);
  for (const name of DATABASES) {
    assert.deepEqual(rows[name].filter((row) => row === 'etl/r1' || row === 'load/s1'), [], `${name} still holds a row of a removed run`);
  }
  assert.deepEqual(rows.runs.sort(), ['etl/r0', 'etl/r1.b2c3d4', 'etl/r2', 'load/s2']);
  assert.deepEqual(rows['runs-by-name'].sort(), rows.runs.sort());
  assert.deepEqual(rows['runs-by-time'].sort(), rows.runs.sort());
  assert.deepEqual(rows.specs.sort(), rows.runs.sort());
  assert.deepEqual(rows['run-steps'].sort(), rows.runs.sort());
  // Two nodes a run.
  assert.equal(rows['run-nodes'].length, 2 * rows.runs.length);
});

test("a sweep's folder listing: files of a run that ended before it are found by it, those of a run that ended after it are removed all the same", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-history-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const logs = new LogFiles(join(dir, 'logs'));
  const store = new LmdbRunStore(join(dir, 'data'));
  t.after(() => store.close());
  const remover = new RunHistory(store).remover();
  const old = await storedRun(store, logs, 'etl', 'old', 1000, { finishedAt: '2000-01-01T00:00:00.000Z' });
  await storedRun(store, logs, 'etl', 'kept', 1500, { finishedAt: '2000-01-01T00:00:00.000Z' });
  // Lists the folder for this remover's lifetime.
  assert.equal(await remover.removeRuns([old]), 1);
  assert.deepEqual((await readdir(logs.dagDir('etl'))).filter((file) => file.startsWith('old.')), []);
  // Written after the listing, by a run that ended after it: the listing cannot tell of its files.
  const fresh = await storedRun(store, logs, 'etl', 'fresh', 2000, { finishedAt: new Date().toISOString() });
  assert.equal(await remover.removeRuns([fresh]), 1);
  const left = await readdir(logs.dagDir('etl'));
  // Its named files went; an earlier attempt's files, found only through a listing, wait for the next sweep's.
  assert.deepEqual(left.filter((file) => file.startsWith('fresh.b2c3d4.')), []);
  assert.equal(left.filter((file) => file.startsWith('kept.')).length, 9);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { open } from 'lmdb';
import { LmdbRunStore } from './lmdb-run-store.ts';
import { DagFiles } from './dag-files.ts';
import { LogFiles } from './log-files.ts';
import { readLogChunk, EXACT_LIMIT } from './log-reader.ts';
import { setLogSink } from '../logging/index.ts';

function record(name: string, dagRunId: string, createdAtMs: number, status: RunStatus = RunStatus.Succeeded): RunRecord {
  return {
    name, dagRunId, attemptId: 'a1', rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status, queuedAt: '', startedAt: '', finishedAt: '', log: '', params: '', nodes: [], createdAtMs,
  };
}

test('run records list newest first by name and by time, with filters', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  const store = new LmdbRunStore(dir);
  t.after(async () => { await store.close(); await rm(dir, { recursive: true, force: true }); });
  await Promise.all([
    store.save(record('a', 'r1', 1000)),
    store.save(record('b', 'r2', 2000, RunStatus.Failed)),
    store.save(record('a', 'r3', 3000)),
  ]);
  await store.save({ ...record('a', 'r3', 3000), status: RunStatus.Failed });
  assert.equal(store.get('a', 'r3')?.status, RunStatus.Failed);
  assert.deepEqual(store.listByName('a', 10).map((r) => r.dagRunId), ['r3', 'r1']);
  assert.equal(store.latest('a')?.dagRunId, 'r3');
  assert.equal(store.latest('zzz'), undefined);
  assert.deepEqual(store.list({}).map((r) => r.dagRunId), ['r3', 'r2', 'r1']);
  assert.deepEqual(store.list({ status: RunStatus.Failed }).map((r) => r.dagRunId), ['r3', 'r2']);
  assert.deepEqual(store.list({ fromMs: 1500, toMs: 2500 }).map((r) => r.dagRunId), ['r2']);
  assert.deepEqual(store.list({ name: 'a', dagRunId: 'r1' }).map((r) => r.dagRunId), ['r1']);
  await store.setSuspended('a', true);
  assert.equal(store.isSuspended('a'), true);
  await store.setSuspended('a', false);
  assert.equal(store.isSuspended('a'), false);
  await store.check();
});

test('a run written transition by transition reads back whole from a reopened store', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const node = (name: string): NodeRecord => ({
    step: { name, executorConfig: { type: 'shell', config: {} } }, stdout: `${name}.out`, stderr: `${name}.err`,
    startedAt: '', finishedAt: '', status: NodeStatus.NotStarted, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
  });
  const first: RunRecord = { ...record('d', 'r', 1000, RunStatus.Running), nodes: [node('a'), node('b'), node('c')] };
  const store = new LmdbRunStore(dir);
  await store.save(first);
  const second: RunRecord = { ...first, nodes: [first.nodes[0], { ...first.nodes[1], status: NodeStatus.Succeeded, doneCount: 1 }, first.nodes[2]] };
  await store.save(second);
  const third: RunRecord = { ...second, status: RunStatus.Succeeded, nodes: [second.nodes[0], second.nodes[1], { ...second.nodes[2], status: NodeStatus.Failed, error: 'boom' }] };
  await store.save(third);
  await store.close();
  const reopened = new LmdbRunStore(dir);
  t.after(() => reopened.close());
  assert.deepEqual(reopened.get('d', 'r'), third);
  assert.deepEqual(reopened.listByName('d', 5), [third]);
});

test('a write that names the nodes it changed looks only at those, and the run reads back whole', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const node = (name: string): NodeRecord => ({
    step: { name, executorConfig: { type: 'shell', config: {} } }, stdout: '', stderr: '',
    startedAt: '', finishedAt: '', status: NodeStatus.NotStarted, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
  });
  const first: RunRecord = { ...record('big', 'r', 1000, RunStatus.Running), nodes: Array.from({ length: 1_000 }, (_, index) => node(`s${index}`)) };
  const store = new LmdbRunStore(dir);
  await store.save(first);
  const changed = first.nodes.slice();
  changed[500] = { ...changed[500], status: NodeStatus.Running };
  changed[501] = { ...changed[501], status: NodeStatus.Succeeded };
  let reads = 0;
  const counted = new Proxy(changed, { get: (target, key, receiver) => { if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads++; return Reflect.get(target, key, receiver); } });
  // Node 499 is named but the same object: compared, not written.
  await store.save({ ...first, nodes: counted }, [499, 500, 501]);
  assert.ok(reads <= 3, `nodes read ${reads} times`);
  await store.save({ ...first, status: RunStatus.Succeeded, nodes: changed }, []);
  await store.close();
  const reopened = new LmdbRunStore(dir);
  t.after(() => reopened.close());
  assert.deepEqual(reopened.get('big', 'r'), { ...first, status: RunStatus.Succeeded, nodes: changed });
});

test('a final record commits before save returns when no write is in flight, and after the writes in flight otherwise', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = new LmdbRunStore(dir);
  await store.save(record('f', 'idle', 1000, RunStatus.Running));
  // Idle: committed (and on disk) by the time save returns, before its promise settles.
  const idle = store.save(record('f', 'idle', 1000, RunStatus.Succeeded));
  assert.equal(store.get('f', 'idle')?.status, RunStatus.Succeeded);
  await idle;
  // Busy: the earlier write of the same run is in flight, so the final one queues behind it and
  // shows only once both are committed; a run that never showed stays unseen until then.
  const running = store.save(record('f', 'busy', 2000, RunStatus.Running));
  const final = store.save(record('f', 'busy', 2000, RunStatus.Failed));
  assert.equal(store.get('f', 'busy'), undefined);
  await Promise.all([running, final]);
  assert.equal(store.get('f', 'busy')?.status, RunStatus.Failed);
  await store.close();
  const reopened = new LmdbRunStore(dir);
  t.after(() => reopened.close());
  assert.equal(reopened.get('f', 'idle')?.status, RunStatus.Succeeded);
  assert.equal(reopened.get('f', 'busy')?.status, RunStatus.Failed);
  assert.deepEqual(reopened.listByName('f', 5).map((run) => run.dagRunId), ['busy', 'idle']);
});

test('DAG files: create refuses an existing file, rename keeps content, names are validated', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-dags-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = new DagFiles(dir);
  await files.write('one', 'steps: [echo 1]\n', 'create');
  await assert.rejects(files.write('one', 'x', 'create'), { code: 'already_exists' });
  await files.rename('one', 'two');
  assert.equal(await files.exists('one'), false);
  assert.equal((await files.read('two'))?.text, 'steps: [echo 1]\n');
  await assert.rejects(files.read('../etc/passwd'), { code: 'bad_request' });
  assert.deepEqual((await files.list()).map((f) => f.fileName), ['two']);
  assert.equal(await files.remove('two'), true);
  assert.equal(await files.remove('two'), false);
});

test('log chunks follow tail > head > offset+limit, exact for small files', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'x.out');
  await writeFile(path, Array.from({ length: 25 }, (_, i) => String(i + 1)).join('\n') + '\n');
  assert.deepEqual(await readLogChunk(path, { tail: 3, head: 5 }), { content: '23\n24\n25', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false, nextOffset: 66 });
  assert.deepEqual(await readLogChunk(path, { head: 3 }), { content: '1\n2\n3', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false, nextOffset: 6 });
  assert.deepEqual(await readLogChunk(path, { offset: 10, limit: 3 }), { content: '10\n11\n12', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false, nextOffset: 27 });
  assert.deepEqual(await readLogChunk(path, { offset: 24 }), { content: '24\n25', lineCount: 2, totalLines: 25, hasMore: false, isEstimate: false, nextOffset: 66 });
  assert.equal((await readLogChunk(path, {}))?.lineCount, 25);
  assert.equal(await readLogChunk(join(dir, 'missing'), {}), undefined);
});

test('log chunks of a large file read only the needed end and estimate the total', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'big.out');
  const lineCount = Math.ceil((EXACT_LIMIT * 2) / 20);
  const lines = Array.from({ length: lineCount }, (_, i) => `line ${String(i + 1).padStart(13, '0')}`);
  await writeFile(path, lines.join('\n') + '\n');
  const tail = await readLogChunk(path, { tail: 2 });
  assert.equal(tail?.content, `${lines[lineCount - 2]}\n${lines[lineCount - 1]}`);
  assert.equal(tail?.isEstimate, true);
  assert.equal(tail?.hasMore, true);
  assert.ok(Math.abs((tail?.totalLines ?? 0) - lineCount) / lineCount < 0.05);
  const middle = await readLogChunk(path, { offset: 1000, limit: 2 });
  assert.equal(middle?.content, `${lines[999]}\n${lines[1000]}`);
  assert.equal(middle?.hasMore, true);
});

test('run log lines land in call order, across ticks, and are all written when the log closes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-logs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const logs = new LogFiles(dir);
  logs.prepare('d');
  const path = logs.runLogPath('d', 'r1', 'a1');
  logs.appendRunLog(path, 'one'); // before the file is open
  logs.appendRunLog(path, 'two');
  await new Promise((resolve) => setTimeout(resolve, 5));
  logs.appendRunLog(path, 'three'); // after
  await new Promise((resolve) => setImmediate(resolve));
  logs.appendRunLog(path, 'four');
  await logs.closeRunLog(path);
  assert.equal(await readFile(path, 'utf8'), 'one\ntwo\nthree\nfour\n');
  await logs.closeRunLog(path); // closing twice is harmless

  // Two closes racing on a log still being opened close its descriptor once, and lose nothing.
  const raced = logs.runLogPath('d', 'r2', 'a1');
  logs.appendRunLog(raced, 'only');
  await Promise.all([logs.closeRunLog(raced), logs.closeRunLog(raced)]);
  assert.equal(await readFile(raced, 'utf8'), 'only\n');

  // The file waits for the run's end, a read, or a short delay: a read writes the waiting lines out.
  const waiting = logs.runLogPath('d', 'r3', 'a1');
  logs.appendRunLog(waiting, 'early');
  await assert.rejects(readFile(waiting, 'utf8'), { code: 'ENOENT' });
  assert.equal((await logs.read(waiting, { offset: 1, limit: 10 }))?.content, 'early');
  logs.appendRunLog(waiting, 'later');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await readFile(waiting, 'utf8'), 'early\nlater\n');
  await logs.closeRunLog(waiting);

  // A run that goes on past the delay gets its file while it runs.
  const long = logs.runLogPath('d', 'r4', 'a1');
  logs.appendRunLog(long, 'started');
  const deadline = Date.now() + 5000;
  while ((await readFile(long, 'utf8').catch(() => '')) !== 'started\n' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(await readFile(long, 'utf8'), 'started\n');
  await logs.closeRunLog(long);

  // Logs of one directory are created one after another (see LogFiles.creating): all of them,
  // each with its own lines, one that cannot be created (a folder has its name) in their midst.
  const many = Array.from({ length: 30 }, (_, i) => logs.runLogPath('d', `m${i}`, 'a1'));
  await mkdir(many[10]);
  const logged: string[] = [];
  const restoreLog = setLogSink({ write: (line: string) => logged.push(line) });
  many.forEach((path, i) => logs.appendRunLog(path, `line ${i}`));
  await Promise.all(many.map((path) => logs.closeRunLog(path)));
  restoreLog();
  assert.equal(logged.length, 1);
  assert.equal(JSON.parse(logged[0]).path, many[10], 'the server log names the log that could not be created');
  for (const [i, path] of many.entries()) {
    if (i !== 10) assert.equal(await readFile(path, 'utf8'), `line ${i}\n`);
  }

  // A log that cannot be created loses its lines, and says so; nothing throws.
  const lost = join(dir, 'missing-folder', 'x.run.log');
  const errors: string[] = [];
  const restore = setLogSink({ write: (line: string) => errors.push(line) });
  logs.appendRunLog(lost, 'gone');
  await logs.closeRunLog(lost);
  restore();
  assert.equal(errors.length, 1);
  assert.deepEqual([JSON.parse(errors[0]).msg, JSON.parse(errors[0]).path], ['cannot write a run log', lost]);
});

test('a run read from the store is kept as its committed record until a write of it commits', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const written = new LmdbRunStore(dir);
  await written.save(record('d', 'r', 1000));
  await written.close();
  const store = new LmdbRunStore(dir);
  t.after(() => store.close());
  // Read twice from a store that did not write it: decoded once (the API keeps what it rendered by record).
  const first = store.get('d', 'r');
  assert.ok(first);
  assert.equal(store.get('d', 'r'), first);
  const failed = { ...first, status: RunStatus.Failed };
  await store.save(failed);
  assert.equal(store.get('d', 'r'), failed);
  assert.equal(store.newestRun('d')?.status, RunStatus.Failed);
});

test('a large run read from the disk is decoded a slice per turn of the event loop, whole and in order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const node = (index: number): NodeRecord => ({
    step: { name: `s${index}`, executorConfig: { type: 'shell', config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
    status: index % 2 === 0 ? NodeStatus.Succeeded : NodeStatus.Failed, retryCount: 0, doneCount: 1, error: '', subRuns: [], subRunsRepeated: [],
  });
  const written = new LmdbRunStore(dir);
  await written.save({ ...record('big', 'r', 1000), nodes: Array.from({ length: 3500 }, (_, index) => node(index)) });
  await written.close();
  const store = new LmdbRunStore(dir);
  t.after(() => store.close());
  const order: string[] = [];
  const reading = store.read('big', 'r').then((run) => { order.push('read'); return run; });
  setImmediate(() => order.push('another request'));
  const run = await reading;
  assert.deepEqual(order, ['another request', 'read']);
  assert.deepEqual(run?.nodes.map((n) => `${n.step.name}:${n.status}`), Array.from({ length: 3500 }, (_, index) => `s${index}:${node(index).status}`));
  // Kept: the next read is the same record, at once.
  assert.equal(await store.read('big', 'r'), run);
  assert.equal(store.get('big', 'r'), run);
  assert.equal(await store.read('big', 'none'), undefined);
  assert.equal(await store.read('nosuch', 'r'), undefined);
});

test('a large first record encoded ahead, a slice per turn, is stored as a plain save stores it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const node = (index: number): NodeRecord => ({
    step: {
      name: `s${index}`, executorConfig: { type: index % 3 === 0 ? 'http' : 'shell', config: index % 3 === 0 ? { timeout: 5 } : {} },
      ...(index > 0 ? { depends: [`s${index - 1}`] } : {}), ...(index % 7 === 0 ? { command: 'echo', args: [String(index)] } : {}),
    },
    stdout: `/logs/s${index}.out`, stderr: `/logs/s${index}.err`, startedAt: '', finishedAt: '',
    status: index % 5 === 0 ? NodeStatus.Succeeded : NodeStatus.NotStarted, retryCount: index % 4, doneCount: 0, error: index % 9 === 0 ? 'é ✓' : '',
    subRuns: index % 11 === 0 ? [{ dagRunId: `c${index}`, params: '' }] : [], subRunsRepeated: [],
  });
  const nodes = Array.from({ length: 2_345 }, (_, index) => node(index));
  const written = new LmdbRunStore(dir);
  // A new run: its nodes are written ahead, and no read finds the run before its save.
  const fresh = { ...record('big', 'r', 1000, RunStatus.Running), nodes };
  const order: string[] = [];
  const preparing = written.prepareFirstSave(fresh).then(() => order.push('prepared'));
  setImmediate(() => order.push('another request'));
  await preparing;
  assert.deepEqual(order, ['another request', 'prepared']);
  assert.equal(written.get('big', 'r'), undefined);
  assert.equal(written.summaries({ name: 'big' }).runs.length, 0);
  await written.save(fresh);
  // A run stored already (a queued run that starts, a retry): its nodes are written by its save.
  await written.save({ ...record('again', 'r', 1000, RunStatus.Queued), nodes: nodes.map((queued) => ({ ...queued, stdout: '', stderr: '' })) });
  const again = { ...record('again', 'r', 1000, RunStatus.Running), nodes };
  await written.prepareFirstSave(again);
  await written.save(again);
  await written.save({ ...record('plain', 'r', 1000, RunStatus.Running), nodes });
  await written.close();
  // Read from the disk: what the encoded writes hold is what a plain save of the same nodes holds.
  const store = new LmdbRunStore(dir);
  t.after(() => store.close());
  assert.deepEqual(store.get('big', 'r'), fresh);
  assert.deepEqual(store.get('again', 'r'), again);
  assert.deepEqual(store.get('big', 'r')?.nodes, store.get('plain', 'r')?.nodes);
});

test('the node rows of a large new run written ahead and never saved (a crash, a save that failed) are removed when the store opens again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const nodes = Array.from({ length: 1_500 }, (_, index): NodeRecord => ({
    step: { name: `s${index}`, executorConfig: { type: 'shell', config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
    status: NodeStatus.NotStarted, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
  }));
  const first = new LmdbRunStore(dir);
  const saved = { ...record('big', 'saved', 1000, RunStatus.Running), nodes };
  await first.prepareFirstSave(saved);
  await first.save(saved);
  // Written ahead, then the process stops before the save.
  await first.prepareFirstSave({ ...record('big', 'lost', 2000, RunStatus.Running), nodes });
  await first.close();
  const rows = async (dagRunId: string) => {
    const root = open({ path: dir, maxDbs: 32, readOnly: true });
    try {
      return [...root.openDB({ name: 'run-nodes' }).getKeys({ start: ['big', dagRunId, 0], end: ['big', dagRunId, Number.MAX_SAFE_INTEGER] })].length;
    } finally {
      await root.close();
    }
  };
  assert.equal(await rows('lost'), 1_500);
  const reopened = new LmdbRunStore(dir);
  await reopened.check();
  await reopened.close();
  assert.equal(await rows('lost'), 0);
  assert.equal(await rows('saved'), 1_500);
  const again = new LmdbRunStore(dir);
  t.after(() => again.close());
  assert.deepEqual(again.get('big', 'saved'), saved);
  assert.equal(again.get('big', 'lost'), undefined);
});

// The embedding API: an engine in another program, its status events, and recovery after a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, RunStatus, type EngineEvent } from '../src/index.ts';
import { LmdbRunStore } from '../src/store/index.ts';

test('subscribers see every run and step transition in order', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-embed-'));
  const handle = await createEngine({ home });
  t.after(async () => { await handle.close(); await rm(home, { recursive: true, force: true }); });
  await writeFile(join(home, 'dags', 'two.yaml'), 'steps:\n  - name: a\n    command: "true"\n  - name: b\n    command: exit 4\n');
  const events: EngineEvent[] = [];
  // The run's events: the file written above is told too (dag.created), as the watch notices it.
  const unsubscribe = handle.engine.subscribe((event) => { if ('dagRunId' in event) events.push(event); });
  const { dagRunId } = await handle.engine.startDag('two', {});
  await handle.engine.whenFinished('two', dagRunId);
  unsubscribe();
  assert.deepEqual(events.map((event) => ('stepName' in event ? `${event.type}:${event.stepName}` : event.type)), [
    'run.running', 'step.running:a', 'step.succeeded:a', 'step.running:b', 'step.failed:b', 'run.failed',
  ]);
  assert.ok(events.every((event) => 'dagRunId' in event && event.name === 'two' && event.dagRunId === dagRunId && !Number.isNaN(Date.parse(event.at))));
  assert.ok(events.every((event, index) => index === 0 || event.seq > events[index - 1].seq), 'numbered in order');
  assert.equal(handle.runs.get('two', dagRunId)?.status, RunStatus.Failed, 'recorded by the time whenFinished resolves');
});

test('subscribers see a run queued, then run, and a dequeued one aborted', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-embed-queue-'));
  const handle = await createEngine({ home });
  t.after(async () => { await handle.close(); await rm(home, { recursive: true, force: true }); });
  await writeFile(join(home, 'dags', 'one.yaml'), 'steps:\n  - name: a\n    command: sleep 0.2\n');
  const events: string[] = [];
  const unsubscribe = handle.engine.subscribe((event) => { if (event.type.startsWith('run.') && 'dagRunId' in event) events.push(`${event.type}:${event.dagRunId}`); });
  await handle.engine.enqueueDag('one', { dagRunId: 'first' });
  await handle.engine.enqueueDag('one', { dagRunId: 'second' });
  await handle.engine.dequeue('one', 'second');
  await handle.engine.whenFinished('one', 'first');
  unsubscribe();
  const of = (id: string) => events.filter((event) => event.endsWith(`:${id}`)).map((event) => event.split(':')[0]);
  assert.deepEqual(of('first'), ['run.queued', 'run.running', 'run.succeeded']);
  assert.deepEqual(of('second'), ['run.queued', 'run.aborted']);
});

test('runs left active by a process that died are closed as failed on the next start', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-crash-'));
  const store = new LmdbRunStore(join(home, 'data'));
  await store.save({
    name: 'ghost', dagRunId: 'g1', attemptId: 'a', rootDAGRunName: 'ghost', rootDAGRunId: 'g1', parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Running, queuedAt: '', startedAt: new Date().toISOString(), finishedAt: '', log: join(home, 'ghost.log'), params: '',
    createdAtMs: Date.now(),
    nodes: [{ step: { name: 's', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '', status: 1, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [] }],
  });
  await store.close();
  const handle = await createEngine({ home });
  t.after(async () => { await handle.close(); await rm(home, { recursive: true, force: true }); });
  const record = handle.runs.get('ghost', 'g1');
  assert.equal(record?.status, RunStatus.Failed);
  assert.equal(record?.error, 'the server stopped while the run was active');
  assert.deepEqual([record?.nodes[0].status, record?.nodes[0].error], [2, 'the server stopped while the run was active']);
});

test('a start whose log directory cannot be made is refused with internal_error and records nothing', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-nolog-'));
  const handle = await createEngine({ home });
  t.after(async () => { await handle.close(); await rm(home, { recursive: true, force: true }); });
  await writeFile(join(home, 'dags', 'blocked.yaml'), 'steps:\n  - "true"\n');
  await writeFile(join(home, 'logs', 'blocked'), 'a file where the DAG log directory would go');
  await assert.rejects(handle.engine.startDag('blocked', { dagRunId: 'b1' }), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'internal_error');
    assert.match(error.message, /cannot create the log directory of DAG blocked/);
    return true;
  });
  assert.equal(handle.runs.get('blocked', 'b1'), undefined);
  assert.equal(handle.engine.isActive('blocked', 'b1'), false);
});

test('a subscriber that comes after every other one left still hears a later run', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-resub-'));
  const handle = await createEngine({ home });
  t.after(async () => { await handle.close(); await rm(home, { recursive: true, force: true }); });
  await writeFile(join(home, 'dags', 'one.yaml'), 'steps:\n  - name: a\n    command: "true"\n');
  const first: string[] = [];
  const stop = handle.engine.subscribe((event) => { if ('dagRunId' in event) first.push(event.type); });
  await handle.engine.whenFinished('one', (await handle.engine.startDag('one', {})).dagRunId);
  stop();
  const quiet = await handle.engine.startDag('one', {});
  await handle.engine.whenFinished('one', quiet.dagRunId);
  const second: string[] = [];
  handle.engine.subscribe((event) => { if ('dagRunId' in event) second.push(event.type); });
  await handle.engine.whenFinished('one', (await handle.engine.startDag('one', {})).dagRunId);
  const expected = ['run.running', 'step.running', 'step.succeeded', 'run.succeeded'];
  assert.deepEqual(first, expected);
  assert.deepEqual(second, expected, 'nothing of the run nobody watched, all of the next one');
});

test('embedders follow the event log as an async iterator: from a resume point, filtered, then live', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-embed-follow-'));
  const handle = await createEngine({ home });
  t.after(async () => { await handle.close(); await rm(home, { recursive: true, force: true }); });
  await writeFile(join(home, 'dags', 'f.yaml'), 'steps:\n  - name: a\n    command: echo a\n');
  const first = await handle.engine.startDag('f', {});
  await handle.engine.whenFinished('f', first.dagRunId);
  const abort = new AbortController();
  const seen: string[] = [];
  const following = (async () => {
    for await (const event of handle.engine.events({ since: 0, filter: { types: ['run.*'] }, signal: abort.signal })) {
      seen.push(`${event.type}:${'dagRunId' in event ? event.dagRunId : ''}:${event.seq}`);
      if (seen.length === 4) abort.abort();
    }
  })();
  const second = await handle.engine.startDag('f', {});
  await following;
  assert.deepEqual(seen.map((line) => line.split(':').slice(0, 2).join(':')), [
    `run.running:${first.dagRunId}`, `run.succeeded:${first.dagRunId}`, `run.running:${second.dagRunId}`, `run.succeeded:${second.dagRunId}`,
  ]);
  // From the log's start: only the DAG file's own event (its watcher may number it first, on a
  // loaded machine) can come before the first run's first.
  assert.ok(['1', '2'].includes(seen[0].split(':')[2]), `the first events of the log: ${seen.join(', ')}`);
});

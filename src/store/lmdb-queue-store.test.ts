import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStatus, RunStatus, isoTime, type NodeRecord, type RunRecord } from '../core/index.ts';
import { LmdbRunStore } from './lmdb-run-store.ts';
import { LmdbQueueStore } from './lmdb-queue-store.ts';

const SPEC = 'steps:\n  - echo hi\n';

function node(name: string): NodeRecord {
  return {
    step: { name, command: 'echo', executorConfig: { type: 'shell', config: {} } }, stdout: '', stderr: '',
    startedAt: '', finishedAt: '', status: NodeStatus.NotStarted, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
  };
}

function queued(name: string, dagRunId: string, createdAtMs = 1_000): RunRecord {
  return {
    name, dagRunId, attemptId: '', rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Queued, queuedAt: isoTime(createdAtMs), startedAt: '', finishedAt: '', log: '', params: '{}',
    nodes: [node('a'), node('b')], createdAtMs,
  };
}

function running(record: RunRecord, at = record.createdAtMs + 10): RunRecord {
  return { ...record, attemptId: 'a1', status: RunStatus.Running, startedAt: isoTime(at), nodes: record.nodes.map((n) => ({ ...n })) };
}

function aborted(record: RunRecord, at = record.createdAtMs + 10): RunRecord {
  return { ...record, status: RunStatus.Aborted, finishedAt: isoTime(at) };
}

async function openStores(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-queue-'));
  let runs = new LmdbRunStore(dir);
  let queue = new LmdbQueueStore(runs);
  t.after(async () => { await runs.close(); await rm(dir, { recursive: true, force: true }); });
  return {
    get runs() { return runs; },
    get queue() { return queue; },
    async reopen() {
      await runs.close();
      runs = new LmdbRunStore(dir);
      queue = new LmdbQueueStore(runs);
    },
  };
}

const ids = (items: Array<{ dagRunId: string }>) => items.map((item) => item.dagRunId);

test('an enqueued run is a queued record with its spec and its item, listed like any run', async (t) => {
  const stores = await openStores(t);
  const item = await stores.queue.enqueue(queued('report', 'r1', 5_000), { queue: 'reports', spec: SPEC, params: 'A=1', fileName: 'report' });
  assert.deepEqual({ ...item }, { queue: 'reports', name: 'report', dagRunId: 'r1', seq: 1, enqueuedAtMs: 5_000, params: 'A=1', fileName: 'report' });
  assert.deepEqual(stores.runs.get('report', 'r1'), queued('report', 'r1', 5_000));
  assert.equal(stores.runs.getSpec('report', 'r1'), SPEC);
  assert.deepEqual(ids(stores.runs.list({ status: RunStatus.Queued })), ['r1']);
  assert.deepEqual(ids(stores.runs.listByName('report', 10)), ['r1']);
  assert.equal(stores.queue.find('report', 'r1'), item);
  assert.equal(stores.queue.head('reports'), item);
  assert.deepEqual(stores.queue.items('reports'), [item]);
  assert.deepEqual(stores.queue.queues(), [{ queue: 'reports', queued: 1, oldestEnqueuedAtMs: 5_000 }]);
  assert.equal(stores.queue.size(), 1);
  assert.equal(stores.queue.size('reports'), 1);
  assert.equal(stores.queue.oldestAgeMs('reports', 7_500), 2_500);
  assert.equal(stores.queue.oldestAgeMs('other', 7_500), undefined);
  assert.equal(stores.queue.head('other'), undefined);
  assert.deepEqual(stores.queue.items('other'), []);
});

test('queues keep their order, and their sequence goes on rising, across a close and reopen', async (t) => {
  const stores = await openStores(t);
  for (const [index, queueName] of ['q1', 'q2', 'q1', 'q1', 'q2'].entries()) {
    await stores.queue.enqueue(queued('d', `r${index}`, 1_000 + index), { queue: queueName, spec: SPEC });
  }
  await stores.queue.dequeue(aborted(stores.runs.get('d', 'r2')!));
  await stores.queue.enqueue(queued('e', 'last', 2_000), { queue: 'q2', spec: SPEC });
  const before = { q1: stores.queue.items('q1'), q2: stores.queue.items('q2'), queues: stores.queue.queues() };
  assert.deepEqual(ids(before.q1), ['r0', 'r3']);
  assert.deepEqual(ids(before.q2), ['r1', 'r4', 'last']);
  await stores.reopen();
  assert.deepEqual(stores.queue.items('q1'), before.q1);
  assert.deepEqual(stores.queue.items('q2'), before.q2);
  assert.deepEqual(stores.queue.queues(), before.queues);
  assert.equal(stores.queue.find('e', 'last')?.seq, 6);
  assert.equal(stores.queue.find('d', 'r2'), undefined);
  // The highest number (6) was given out before the close: the next one is higher still, also in
  // a queue whose items were all removed.
  await stores.queue.dispatch(running(stores.runs.get('e', 'last')!));
  await stores.reopen();
  const next = await stores.queue.enqueue(queued('f', 'after', 3_000), { queue: 'q2', spec: SPEC });
  assert.equal(next.seq, 7);
  assert.deepEqual(ids(stores.queue.items('q2')), ['r1', 'r4', 'after']);
});

test('1,000 concurrent enqueues into four queues are all stored, each queue in call order', async (t) => {
  const stores = await openStores(t);
  const queueNames = ['a', 'b', 'c', 'd'];
  const calls = Array.from({ length: 1_000 }, (_, index) => ({ queue: queueNames[(index * 7) % 4], dagRunId: `run-${index}` }));
  const items = await Promise.all(calls.map(({ queue, dagRunId }, index) => stores.queue.enqueue(queued('storm', dagRunId, 10_000 + index), { queue, spec: SPEC })));
  assert.deepEqual(items.map((item) => item.seq), calls.map((_, index) => index + 1));
  const check = () => {
    assert.equal(stores.queue.size(), 1_000);
    for (const queue of queueNames) {
      const stored = stores.queue.items(queue);
      assert.deepEqual(ids(stored), calls.filter((call) => call.queue === queue).map((call) => call.dagRunId));
      assert.ok(stored.every((item, index) => index === 0 || item.seq > stored[index - 1].seq));
    }
    assert.deepEqual(stores.queue.queues().map((summary) => [summary.queue, summary.queued, summary.oldestEnqueuedAtMs]), [['a', 250, 10_000], ['b', 250, 10_003], ['c', 250, 10_002], ['d', 250, 10_001]]);
    assert.equal(stores.runs.list({ status: RunStatus.Queued }).length, 1_000);
  };
  check();
  await stores.reopen();
  check();
});

test('an enqueue whose record cannot be written leaves no item, no record and no spec, and one refused as a duplicate leaves the stored run as it was', async (t) => {
  const stores = await openStores(t);
  const broken = queued('broken', 'r1');
  // Refused before anything is written.
  Object.defineProperty(broken.nodes[1], 'error', { enumerable: true, get: () => { throw new Error('cannot encode'); } });
  await assert.rejects(stores.queue.enqueue(broken, { queue: 'q', spec: SPEC }), /cannot encode/);
  const nothingStored = () => {
    assert.equal(stores.queue.find('broken', 'r1'), undefined);
    assert.equal(stores.queue.size(), 0);
    assert.deepEqual(stores.queue.queues(), []);
    assert.equal(stores.runs.get('broken', 'r1'), undefined);
    assert.equal(stores.runs.getSpec('broken', 'r1'), undefined);
    assert.deepEqual(stores.runs.list({}), []);
  };
  nothingStored();
  await stores.reopen();
  nothingStored();
  // The rolled-back number was never seen: it is given to the next item.
  assert.equal((await stores.queue.enqueue(queued('fine', 'r1'), { queue: 'q', spec: SPEC })).seq, 1);

  const finished: RunRecord = { ...queued('done', 'r1'), status: RunStatus.Succeeded, queuedAt: '', startedAt: isoTime(1), finishedAt: isoTime(2) };
  await stores.runs.save(finished);
  await assert.rejects(stores.queue.enqueue(queued('done', 'r1', 9_000), { queue: 'q', spec: SPEC }), { code: 'already_exists' });
  assert.deepEqual(stores.runs.get('done', 'r1'), finished);
  assert.equal(stores.queue.find('done', 'r1'), undefined);
  // Two enqueues of one run in the same turn: the second is refused at the call.
  const results = await Promise.allSettled([
    stores.queue.enqueue(queued('twice', 'r1', 1), { queue: 'q', spec: SPEC }),
    stores.queue.enqueue(queued('twice', 'r1', 2), { queue: 'q2', spec: SPEC }),
  ]);
  assert.equal(results[0].status, 'fulfilled');
  assert.equal(results[1].status === 'rejected' && (results[1].reason as { code: string }).code, 'already_exists');
  assert.equal(stores.runs.get('twice', 'r1')?.createdAtMs, 1);
  assert.deepEqual(ids(stores.queue.items('q')), ['r1', 'r1']);
  assert.deepEqual(stores.queue.items('q2'), []);
  await stores.reopen();
  assert.deepEqual(stores.queue.items('q').map((item) => item.name), ['fine', 'twice']);
  assert.deepEqual(stores.queue.items('q2'), []);
});

test('a dequeued run leaves its queue recorded aborted, once', async (t) => {
  const stores = await openStores(t);
  await stores.queue.enqueue(queued('d', 'first'), { queue: 'q', spec: SPEC });
  await stores.queue.enqueue(queued('d', 'second', 1_001), { queue: 'q', spec: SPEC });
  const record = aborted(stores.runs.get('d', 'first')!);
  const item = await stores.queue.dequeue(record);
  assert.equal(item.dagRunId, 'first');
  assert.deepEqual(stores.runs.get('d', 'first'), record);
  assert.deepEqual(ids(stores.queue.items('q')), ['second']);
  assert.equal(stores.queue.find('d', 'first'), undefined);
  await assert.rejects(stores.queue.dequeue(record), { code: 'not_found' });
  await assert.rejects(stores.queue.dispatch(running(queued('d', 'first'))), { code: 'not_found' });
  assert.deepEqual(stores.runs.get('d', 'first'), record);
  await assert.rejects(stores.queue.dequeue(aborted(queued('d', 'never'))), { code: 'not_found' });
  await assert.rejects(stores.queue.dequeue(aborted(queued('../x', 'r1'))), { code: 'not_found' });
  await stores.reopen();
  assert.deepEqual(stores.runs.get('d', 'first'), record);
  assert.deepEqual(ids(stores.runs.listByName('d', 10)), ['second', 'first']);
  assert.deepEqual(ids(stores.queue.items('q')), ['second']);
});

test('a dispatched run leaves its queue recorded running, and its later transitions read back whole', async (t) => {
  const stores = await openStores(t);
  await stores.queue.enqueue(queued('d', 'r1', 1_000), { queue: 'q', spec: SPEC, params: 'X=1' });
  await stores.queue.enqueue(queued('d', 'r2', 1_001), { queue: 'q', spec: SPEC });
  const head = stores.queue.head('q')!;
  assert.equal(head.params, 'X=1');
  // A record that moved its creation time would be listed twice: refused, and the run stays queued.
  await assert.rejects(stores.queue.dispatch({ ...running(stores.runs.get('d', 'r1')!), createdAtMs: 5 }), /createdAtMs/);
  assert.equal(stores.queue.head('q'), head);
  assert.equal(stores.runs.get('d', 'r1')?.status, RunStatus.Queued);
  const first = running(stores.runs.get('d', 'r1')!);
  assert.equal(await stores.queue.dispatch(first), head);
  assert.deepEqual(stores.runs.get('d', 'r1'), first);
  assert.deepEqual(ids(stores.queue.items('q')), ['r2']);
  const nodes = [{ ...first.nodes[0], status: NodeStatus.Succeeded }, first.nodes[1]] as NodeRecord[];
  await stores.runs.save({ ...first, nodes }, [0]);
  const final: RunRecord = { ...first, status: RunStatus.Succeeded, finishedAt: isoTime(2_000), nodes: [nodes[0], { ...nodes[1], status: NodeStatus.Succeeded }] };
  await stores.runs.save(final, [1]);
  await stores.reopen();
  assert.deepEqual(stores.runs.get('d', 'r1'), final);
  assert.deepEqual(ids(stores.runs.list({})), ['r2', 'r1']);
  assert.deepEqual(ids(stores.queue.items('q')), ['r2']);
});

test('a dispatch and a dequeue of one run in the same turn: exactly one wins, and the record is the winner\'s', async (t) => {
  const stores = await openStores(t);
  await stores.queue.enqueue(queued('race', 'r1'), { queue: 'q', spec: SPEC });
  const record = stores.runs.get('race', 'r1')!;
  const [dequeued, dispatched] = await Promise.allSettled([stores.queue.dequeue(aborted(record)), stores.queue.dispatch(running(record))]);
  assert.equal(dequeued.status, 'fulfilled');
  assert.equal(dispatched.status === 'rejected' && (dispatched.reason as { code: string }).code, 'not_found');
  assert.equal(stores.runs.get('race', 'r1')?.status, RunStatus.Aborted);
  assert.equal(stores.queue.size(), 0);
  await stores.reopen();
  assert.equal(stores.runs.get('race', 'r1')?.status, RunStatus.Aborted);
});

test('names are checked before they become keys; queue names such as __proto__ are ordinary', async (t) => {
  const stores = await openStores(t);
  const refused = async (record: RunRecord, queue: string) => assert.rejects(stores.queue.enqueue(record, { queue, spec: SPEC }), { code: 'bad_request' });
  await refused(queued('d', 'r1'), '');
  await refused(queued('d', 'r1'), 'x'.repeat(3_000));
  await refused(queued('d', 'r1'), 'a/b');
  await refused(queued('d'.repeat(3_000), 'r1'), 'q');
  await refused(queued('d', 'latest'), 'q');
  await refused(running(queued('d', 'r1')), 'q');
  await refused({ ...queued('d', 'r1'), queuedAt: '' }, 'q');
  await refused({ ...queued('d', 'r1'), nodes: [{ ...node('a'), status: NodeStatus.Succeeded }] }, 'q');
  await assert.rejects(stores.queue.dispatch(queued('d', 'r1')), { code: 'bad_request' });
  await assert.rejects(stores.queue.dequeue(running(queued('d', 'r1'))), { code: 'bad_request' });
  assert.equal(stores.queue.find('d'.repeat(3_000), 'r1'), undefined);
  assert.deepEqual(stores.runs.list({}), []);

  await stores.queue.enqueue(queued('constructor', 'toString'), { queue: '__proto__', spec: SPEC });
  await stores.queue.enqueue(queued('hasOwnProperty', 'r1'), { queue: 'constructor', spec: SPEC });
  assert.equal(stores.queue.find('__proto__', 'r1'), undefined);
  assert.equal(stores.queue.head('toString'), undefined);
  assert.deepEqual(stores.queue.queues().map((summary) => [summary.queue, summary.queued]), [['__proto__', 1], ['constructor', 1]]);
  await stores.reopen();
  assert.deepEqual(ids(stores.queue.items('__proto__')), ['toString']);
  assert.equal(stores.queue.find('constructor', 'toString')?.queue, '__proto__');
});

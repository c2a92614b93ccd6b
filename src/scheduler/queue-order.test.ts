import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideDispatch, waitKey, type DispatchState, type QueuedRun } from './queue-order.ts';

let seq = 0;
const item = (queue: string, name: string, maxActiveRuns = 1): QueuedRun => ({ queue, name, dagRunId: `${name}-${++seq}`, maxActiveRuns });

function state(items: QueuedRun[], overrides: Partial<DispatchState> = {}): DispatchState {
  const queued = new Map<string, QueuedRun[]>();
  for (const queued_ of items) queued.set(queued_.queue, [...(queued.get(queued_.queue) ?? []), queued_]);
  return { queued, runningByQueue: new Map(), runningByName: new Map(), queueLimits: new Map(), isSuspended: () => false, ...overrides };
}

test('a DAG queue starts its runs first in first, up to maxActiveRuns counting runs started directly', () => {
  const items = [item('etl', 'etl', 3), item('etl', 'etl', 3), item('etl', 'etl', 3), item('etl', 'etl', 3)];
  const decision = decideDispatch(state(items, { runningByName: new Map([['etl', 1]]) }));
  assert.deepEqual(decision.start.map((run) => run.dagRunId), [items[0].dagRunId, items[1].dagRunId]);
  assert.deepEqual([...decision.waiting], [[waitKey(items[2]), 'maxActiveRuns'], [waitKey(items[3]), 'maxActiveRuns']]);
});

test('a custom queue holds to its maxConcurrency and every DAG to its maxActiveRuns, at once', () => {
  const a1 = item('shared', 'a', 1);
  const a2 = item('shared', 'a', 1);
  const b1 = item('shared', 'b', 5);
  const c1 = item('shared', 'c', 5);
  const d1 = item('shared', 'd', 5);
  const decision = decideDispatch(state([a1, a2, b1, c1, d1], { queueLimits: new Map([['shared', 3]]) }));
  // a2 waits for its DAG, and lets b1 and c1 behind it go; d1 finds the queue full.
  assert.deepEqual(decision.start.map((run) => run.dagRunId), [a1.dagRunId, b1.dagRunId, c1.dagRunId]);
  assert.deepEqual(decision.waiting.get(waitKey(a2)), 'maxActiveRuns');
  assert.deepEqual(decision.waiting.get(waitKey(d1)), 'queue');
});

test('runs already active through a queue count against it; -1 is unlimited', () => {
  const items = [item('q', 'x', -1), item('q', 'x', -1), item('q', 'x', -1)];
  const full = decideDispatch(state(items, { queueLimits: new Map([['q', 2]]), runningByQueue: new Map([['q', 2]]) }));
  assert.deepEqual(full.start, []);
  assert.deepEqual(new Set(full.waiting.values()), new Set(['queue']));
  const open = decideDispatch(state(items, { queueLimits: new Map([['q', -1]]), runningByQueue: new Map([['q', 50]]) }));
  assert.equal(open.start.length, 3);
});

test('a suspended DAG waits without holding back other DAGs or other queues', () => {
  const held = { ...item('shared', 'paused', 5), fileName: 'paused' };
  const next = item('shared', 'other', 5);
  const own = item('solo', 'solo', 1);
  const decision = decideDispatch(state([held, next, own], { isSuspended: (fileName) => fileName === 'paused' }));
  assert.deepEqual(decision.start.map((run) => run.name), ['other', 'solo']);
  assert.deepEqual([...decision.waiting], [[waitKey(held), 'suspended']]);
});

test('queue and DAG names that are Object.prototype keys are ordinary names', () => {
  const items = [item('__proto__', 'constructor', 1), item('__proto__', 'constructor', 1)];
  const decision = decideDispatch(state(items, { queueLimits: new Map([['__proto__', 5]]) }));
  assert.deepEqual(decision.start.map((run) => run.dagRunId), [items[0].dagRunId]);
  assert.equal(decision.waiting.get(waitKey(items[1])), 'maxActiveRuns');
});

test('a dispatch without reasons starts the same runs, stops at a full queue, and reports none waiting', () => {
  const items = [item('shared', 'a', 5), item('shared', 'b', 5), item('shared', 'c', 5), item('other', 'd', 1)];
  const at = state(items, { queueLimits: new Map([['shared', 1]]) });
  const full = decideDispatch(at);
  const fast = decideDispatch(at, { withReasons: false });
  assert.deepEqual(fast.start, full.start);
  assert.equal(fast.waiting.size, 0);
  assert.equal(full.waiting.size, 2);
});

test('runs for workers go while a worker carrying their labels has room; those whose labels have none wait, and others behind them go', () => {
  const worker = (id: string, labels: Record<string, string>, totalPollers: number) => ({
    id, labels, totalPollers, busyPollers: 0, runningTasks: [], lastHeartbeatAt: '', healthStatus: 'healthy' as const,
  });
  const on = (labels: Record<string, string>) => ({ ...item('q', `d${seq}`, -1), workerSelector: labels });
  const items = [on({ pool: 'gpu', zone: 'eu' }), on({ zone: 'eu', pool: 'gpu' }), on({ zone: 'eu', pool: 'gpu' }), on({ pool: 'cpu' }), on({ pool: 'cpu' }), on({ pool: 'cpu' })];
  const workers = { list: [worker('g', { pool: 'gpu', zone: 'eu' }, 2), worker('c', { pool: 'cpu' }, 3)], placed: new Map([['c', 1]]) };
  const decision = decideDispatch(state(items, { workers }));
  // The labels' order does not matter; each worker takes what room it has.
  assert.deepEqual(decision.start.map((run) => run.dagRunId), [items[0], items[1], items[3], items[4]].map((run) => run.dagRunId));
  assert.deepEqual([...decision.placements.values()], ['g', 'g', 'c', 'c']);
  assert.deepEqual([...decision.waiting], [[waitKey(items[2]), 'worker'], [waitKey(items[5]), 'worker']]);
});

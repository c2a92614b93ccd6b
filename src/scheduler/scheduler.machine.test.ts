import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createActor } from 'xstate';
import type { QueuedRun } from './queue-order.ts';
import { schedulerMachine } from './scheduler.machine.ts';
import { admittedCount } from './slots.ts';

test('reserved slots count against a DAG name until released, and only against that name', () => {
  const scheduler = createActor(schedulerMachine, { input: {} }).start();
  ['etl', 'etl', 'etl', 'report'].forEach((name, index) => scheduler.send({ type: 'run.reserve', name, dagRunId: `r${index}` }));
  scheduler.send({ type: 'run.release', name: 'etl', dagRunId: 'r0' });
  const context = scheduler.getSnapshot().context;
  assert.equal(admittedCount(context, 'etl'), 2);
  assert.equal(admittedCount(context, 'report'), 1);
  assert.equal(admittedCount(context, 'other'), 0);
  scheduler.send({ type: 'run.release', name: 'report', dagRunId: 'r3' });
  assert.equal(scheduler.getSnapshot().context.reserved.has('report'), false, 'a name with no slot left is dropped');
  scheduler.stop();
});

test('names that are Object.prototype keys are counted like any other', () => {
  const scheduler = createActor(schedulerMachine, { input: {} }).start();
  for (const name of ['__proto__', 'constructor', 'toString']) {
    assert.equal(admittedCount(scheduler.getSnapshot().context, name), 0);
    scheduler.send({ type: 'run.reserve', name, dagRunId: 'one' });
    assert.equal(admittedCount(scheduler.getSnapshot().context, name), 1);
  }
  scheduler.stop();
});

/** A scheduler whose dispatched runs are collected, not started. */
function recording(limits: Array<[string, number]> = []) {
  const started: QueuedRun[] = [];
  const machine = schedulerMachine.provide({ actions: { startQueued: (_, { run }) => { started.push(run); } } });
  const scheduler = createActor(machine, { input: { queueLimits: new Map(limits) } }).start();
  return { scheduler, started };
}

const queued = (queue: string, name: string, dagRunId: string, maxActiveRuns = -1): QueuedRun => ({ queue, name, dagRunId, maxActiveRuns });

test('an enqueued run is dispatched at once while its queue has room, and holds a reserved slot', () => {
  const { scheduler, started } = recording([['batch', 2]]);
  for (const id of ['a', 'b', 'c']) scheduler.send({ type: 'queue.add', run: queued('batch', 'job', id) });
  assert.deepEqual(started.map((run) => run.dagRunId), ['a', 'b']);
  const context = scheduler.getSnapshot().context;
  assert.equal(admittedCount(context, 'job'), 2);
  assert.equal(context.byQueue.get('batch'), 2);
  assert.deepEqual(context.queued.get('batch')?.map((run) => run.dagRunId), ['c']);
  scheduler.stop();
});

test('a slot released by a run that gave up, or raised by a new limit, dispatches the next run in order', () => {
  const { scheduler, started } = recording([['batch', 1]]);
  for (const id of ['a', 'b', 'c', 'd']) scheduler.send({ type: 'queue.add', run: queued('batch', 'job', id) });
  assert.deepEqual(started.map((run) => run.dagRunId), ['a']);
  scheduler.send({ type: 'run.release', name: 'job', dagRunId: 'a' });
  assert.deepEqual(started.map((run) => run.dagRunId), ['a', 'b']);
  scheduler.send({ type: 'queue.limits', limits: new Map([['batch', 3]]) });
  assert.deepEqual(started.map((run) => run.dagRunId), ['a', 'b', 'c', 'd']);
  assert.equal(scheduler.getSnapshot().context.byQueue.get('batch'), 3);
  scheduler.stop();
});

test('a removed run is never dispatched, and a paused scheduler dispatches nothing', () => {
  const { scheduler, started } = recording([['batch', 1]]);
  scheduler.send({ type: 'run.reserve', name: 'job', dagRunId: 'direct', queue: 'batch' });
  scheduler.send({ type: 'queue.add', run: queued('batch', 'job', 'a') });
  scheduler.send({ type: 'queue.add', run: queued('batch', 'job', 'b') });
  scheduler.send({ type: 'queue.remove', name: 'job', dagRunId: 'a' });
  scheduler.send({ type: 'queue.pause' });
  scheduler.send({ type: 'run.release', name: 'job', dagRunId: 'direct' });
  assert.deepEqual(started, []);
  assert.deepEqual(scheduler.getSnapshot().context.queued.get('batch')?.map((run) => run.dagRunId), ['b']);
  scheduler.stop();
});

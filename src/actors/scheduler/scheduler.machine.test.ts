import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createActor } from 'xstate';
import { admittedCount, schedulerMachine } from './scheduler.machine.ts';

test('reserved slots count against a DAG name until released, and only against that name', () => {
  const scheduler = createActor(schedulerMachine).start();
  for (const name of ['etl', 'etl', 'etl', 'report']) scheduler.send({ type: 'run.reserve', name });
  scheduler.send({ type: 'run.release', name: 'etl' });
  const context = scheduler.getSnapshot().context;
  assert.equal(admittedCount(context, 'etl'), 2);
  assert.equal(admittedCount(context, 'report'), 1);
  assert.equal(admittedCount(context, 'other'), 0);
  scheduler.send({ type: 'run.release', name: 'report' });
  assert.equal(scheduler.getSnapshot().context.reserved.has('report'), false, 'a name with no slot left is dropped');
  scheduler.stop();
});

test('names that are Object.prototype keys are counted like any other', () => {
  const scheduler = createActor(schedulerMachine).start();
  for (const name of ['__proto__', 'constructor', 'toString']) {
    assert.equal(admittedCount(scheduler.getSnapshot().context, name), 0);
    scheduler.send({ type: 'run.reserve', name });
    assert.equal(admittedCount(scheduler.getSnapshot().context, name), 1);
  }
  scheduler.stop();
});

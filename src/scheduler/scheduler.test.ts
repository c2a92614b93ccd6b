// The scheduler as its callers meet it: one question, one answer. Counted without a run executing:
// the effects are collected, not performed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunInput } from '../actors/index.ts';
import type { AdmissionAsk } from './admission.ts';
import type { QueuedRun } from './queue-order.ts';
import { Scheduler } from './scheduler.ts';
import type { Slot } from './slots.ts';

/** A scheduler whose dispatched runs and begun runs are collected, not started. */
function recording(limits: Array<[string, number]> = [], stored = new Set<string>()) {
  const started: Array<{ run: QueuedRun; slot: Slot }> = [];
  const dispatched: string[] = [];
  const scheduler = new Scheduler({ queueLimits: new Map(limits), isStored: (name, id) => stored.has(`${name}/${id}`), isSuspended: () => false, paused: false }, {
    dispatchRun: (input) => dispatched.push(input.record.dagRunId),
    stopRun: () => {},
    announceFinished: () => {},
    startQueued: (run, slot) => started.push({ run, slot }),
  });
  scheduler.start();
  return { scheduler, started, dispatched };
}

const ask = (name: string, dagRunId: string, extra: Partial<AdmissionAsk> = {}): AdmissionAsk => ({ kind: 'start', name, dagRunId, queue: name, maxActiveRuns: -1, ...extra });
const inputOf = (name: string, dagRunId: string) => ({ record: { name, dagRunId } }) as unknown as RunInput;
const slotOf = (answer: ReturnType<Scheduler['ask']>) => {
  assert.equal(answer.outcome, 'admitted');
  return (answer as { slot: Slot }).slot;
};
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('admitted slots count against a DAG name until released, and only against that name', () => {
  const { scheduler } = recording();
  const slots = ['etl', 'etl', 'etl', 'report'].map((name, index) => slotOf(scheduler.ask(ask(name, `r${index}`))));
  scheduler.release(slots[0]);
  assert.equal(scheduler.view.admitted('etl'), 2);
  assert.equal(scheduler.view.admitted('report'), 1);
  assert.equal(scheduler.view.admitted('other'), 0);
  scheduler.release(slots[3]);
  scheduler.release(slots[3]);
  assert.equal(scheduler.view.admitted('report'), 0, 'a slot handed back twice is counted once');
  scheduler.stop();
});

test('names that are Object.prototype keys are counted like any other', () => {
  const { scheduler } = recording();
  for (const name of ['__proto__', 'constructor', 'toString']) {
    assert.equal(scheduler.view.admitted(name), 0);
    slotOf(scheduler.ask(ask(name, 'one')));
    assert.equal(scheduler.view.admitted(name), 1);
  }
  scheduler.stop();
});

test('two asks for the last slot: the first is admitted, the second refused; the slot freed admits the next', () => {
  const { scheduler, dispatched } = recording();
  const first = scheduler.ask(ask('etl', 'a', { maxActiveRuns: 1 }));
  const second = scheduler.ask(ask('etl', 'b', { maxActiveRuns: 1 }));
  assert.equal(first.outcome, 'admitted');
  assert.equal(second.outcome, 'refused');
  assert.equal((second as { error: { code: string } }).error.code, 'max_run_reached');
  assert.deepEqual(scheduler.begin(slotOf(first), inputOf('etl', 'a'), () => {}), { begun: true });
  assert.deepEqual(dispatched, ['a']);
  assert.equal(scheduler.view.isActive('etl', 'a'), true);
  assert.equal(scheduler.ask(ask('etl', 'c', { maxActiveRuns: 1 })).outcome, 'refused', 'the active run holds the slot');
  scheduler.finished({ type: 'run.finished', name: 'etl', dagRunId: 'a', status: 4, log: '' });
  assert.equal(scheduler.ask(ask('etl', 'c', { maxActiveRuns: 1 })).outcome, 'admitted');
  scheduler.stop();
});

test('an id being started, active, queued or stored is taken; a singleton waits for every run of its name', () => {
  const { scheduler } = recording([], new Set(['etl/stored']));
  slotOf(scheduler.ask(ask('etl', 'a')));
  const code = (answer: ReturnType<Scheduler['ask']>) => (answer as { error?: { code: string } }).error?.code;
  assert.equal(code(scheduler.ask(ask('etl', 'a'))), 'already_exists');
  assert.equal(code(scheduler.ask(ask('etl', 'stored'))), 'already_exists');
  assert.equal(code(scheduler.ask(ask('etl', 'x', { singleton: true }))), 'already_running');
  assert.equal(code(scheduler.ask(ask('etl', 'x', { singleton: true, kind: 'inline' }))), 'max_run_reached');
  assert.equal(code(scheduler.ask(ask('etl', 'x', { kind: 'retry', prior: 'a' }))), 'already_running', 'a run being started is not retried');
  scheduler.stop();
});

test('a slot given up does not begin; a draining scheduler begins only sub DAG runs, a closed one none', () => {
  const { scheduler, dispatched } = recording();
  const gone = slotOf(scheduler.ask(ask('etl', 'a')));
  scheduler.release(gone);
  const refused = scheduler.begin(gone, inputOf('etl', 'a'), () => assert.fail('a refused run does not begin'));
  assert.equal(refused.begun, false);
  const plain = slotOf(scheduler.ask(ask('etl', 'b')));
  const sub = slotOf(scheduler.ask(ask('child', 'c', { kind: 'sub' })));
  scheduler.drain();
  assert.equal(scheduler.ask(ask('etl', 'd')).outcome, 'refused');
  assert.equal(scheduler.begin(plain, inputOf('etl', 'b'), () => {}).begun, false);
  assert.equal(scheduler.view.admitted('etl'), 0, 'the refused run handed its slot back');
  assert.equal(scheduler.begin(sub, inputOf('child', 'c'), () => {}).begun, true);
  scheduler.close();
  assert.equal(scheduler.ask(ask('child', 'e', { kind: 'sub' })).outcome, 'refused');
  assert.deepEqual(dispatched, ['c']);
  scheduler.stop();
});

test('an enqueued run is dispatched at once while its queue has room, holding a counted slot', async () => {
  const { scheduler, started } = recording([['batch', 2]]);
  const answers = ['a', 'b', 'c'].map((id) => scheduler.ask(ask('job', id, { kind: 'enqueue', queue: 'batch' })));
  assert.deepEqual(answers.map((answer) => answer.outcome), ['queued', 'queued', 'queued']);
  assert.deepEqual(answers.map((answer) => (answer as { waitingFor?: string }).waitingFor), [undefined, undefined, 'queue']);
  await settle();
  assert.deepEqual(started.map(({ run }) => run.dagRunId), ['a', 'b']);
  assert.equal(scheduler.view.admitted('job'), 2);
  assert.deepEqual(scheduler.view.queued().get('batch')?.map((run) => run.dagRunId), ['c']);
  scheduler.stop();
});

test('a slot released by a run that gave up, or raised by a new limit, dispatches the next run in order', async () => {
  const { scheduler, started } = recording([['batch', 1]]);
  for (const id of ['a', 'b', 'c', 'd']) scheduler.ask(ask('job', id, { kind: 'enqueue', queue: 'batch' }));
  await settle();
  assert.deepEqual(started.map(({ run }) => run.dagRunId), ['a']);
  scheduler.release(started[0].slot);
  await settle();
  assert.deepEqual(started.map(({ run }) => run.dagRunId), ['a', 'b']);
  scheduler.setQueueLimits(new Map([['batch', 3]]));
  await settle();
  assert.deepEqual(started.map(({ run }) => run.dagRunId), ['a', 'b', 'c', 'd']);
  scheduler.stop();
});

test('a reschedule waits while its custom queue is busy and starts when it is not', () => {
  const { scheduler } = recording([['batch', 1]]);
  const direct = slotOf(scheduler.ask(ask('job', 'direct', { queue: 'batch' })));
  assert.equal(scheduler.ask(ask('job', 'again', { kind: 'reschedule', queue: 'batch' })).outcome, 'refused', 'a reschedule is a singleton');
  assert.equal(scheduler.ask(ask('other', 'again', { kind: 'reschedule', queue: 'batch' })).outcome, 'queued');
  scheduler.release(direct);
  assert.equal(scheduler.ask(ask('third', 'x', { kind: 'reschedule', queue: 'third' })).outcome, 'admitted');
  scheduler.stop();
});

test('a removed run is never dispatched, and a draining scheduler dispatches nothing', async () => {
  const { scheduler, started } = recording([['batch', 1]]);
  const direct = slotOf(scheduler.ask(ask('job', 'direct', { queue: 'batch' })));
  scheduler.ask(ask('job', 'a', { kind: 'enqueue', queue: 'batch' }));
  scheduler.ask(ask('job', 'b', { kind: 'enqueue', queue: 'batch' }));
  assert.equal((await scheduler.dequeue('job', 'a'))?.dagRunId, 'a');
  assert.equal(await scheduler.dequeue('job', 'a'), undefined);
  scheduler.drain();
  scheduler.release(direct);
  await settle();
  assert.deepEqual(started, []);
  assert.deepEqual(scheduler.view.queued().get('batch')?.map((run) => run.dagRunId), ['b']);
  scheduler.stop();
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, type NodeRecord } from '../../core/index.ts';
import { allStepsSettled, hasStepsToStart, newSchedule, recordFinished, takeBlocked, takeReady, type Schedule } from './schedule.ts';

const node = (status: NodeStatus): NodeRecord => ({
  step: { name: 'x', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});
const { NotStarted, Running, Succeeded, Failed, Aborted, Skipped } = NodeStatus;

/** A run's nodes as the run actor keeps them: started and finished through the schedule. */
function runOf(steps: Array<{ depends: number[] }>, statuses: NodeStatus[] = steps.map(() => NotStarted)) {
  const nodes = statuses.map(node);
  const schedule = newSchedule(steps, nodes);
  return {
    schedule, nodes,
    start(maxActiveSteps: number): number[] {
      const started = takeReady(schedule, maxActiveSteps);
      for (const index of started) nodes[index] = node(Running);
      return started;
    },
    finish(index: number, status: NodeStatus, lets = status === Succeeded) {
      nodes[index] = node(status);
      recordFinished(schedule, nodes, index, lets);
    },
    block(): Array<[number, number, NodeStatus]> {
      const blocked = takeBlocked(schedule, steps, (index) => nodes[index].status);
      for (const { index, status } of blocked) nodes[index] = node(status);
      return blocked.map(({ index, culprit, status }) => [index, culprit, status]);
    },
  };
}

test('ready steps respect dependencies and the free slots of maxActiveSteps, lowest index first', () => {
  const run = runOf([{ depends: [] }, { depends: [] }, { depends: [] }, { depends: [0, 1] }]);
  assert.deepEqual(run.start(2), [0, 1]);
  assert.deepEqual(run.start(2), [], 'no free slot');
  run.finish(0, Succeeded);
  assert.deepEqual(run.start(2), [2], 'step 3 still waits for step 1');
  run.finish(1, Succeeded);
  assert.ok(hasStepsToStart(run.schedule, 2));
  assert.deepEqual(run.start(2), [3]);
  run.finish(2, Succeeded);
  run.finish(3, Succeeded);
  assert.ok(allStepsSettled(run.schedule));
  assert.equal(run.schedule.running, 0);
});

test('ready steps wait in a heap: with one slot they start in definition order, whatever order they became ready in', () => {
  const steps = [{ depends: [] }, ...Array.from({ length: 6 }, () => ({ depends: [0] }))];
  const run = runOf(steps);
  assert.deepEqual(run.start(1), [0]);
  run.finish(0, Succeeded);
  const order: number[] = [];
  for (let index = 1; index <= 6; index++) {
    const [started] = run.start(1);
    order.push(started);
    run.finish(started, Succeeded);
  }
  assert.deepEqual(order, [1, 2, 3, 4, 5, 6]);
});

test('steps downstream of a failure are aborted, transitively, each naming the upstream that stops it', () => {
  const run = runOf([{ depends: [] }, { depends: [0] }, { depends: [1] }, { depends: [] }]);
  assert.deepEqual(run.start(4), [0, 3]);
  run.finish(0, Failed);
  assert.ok(hasStepsToStart(run.schedule, 4), 'the failure is still to be propagated');
  assert.deepEqual(run.block(), [[1, 0, Aborted], [2, 1, Aborted]]);
  assert.deepEqual(run.block(), [], 'propagated once');
  assert.ok(!allStepsSettled(run.schedule), 'step 3 runs on');
  run.finish(3, Succeeded);
  assert.ok(allStepsSettled(run.schedule));
});

test('a step with a failed upstream is blocked at once, while its other upstream still runs', () => {
  const run = runOf([{ depends: [] }, { depends: [] }, { depends: [1, 0] }]);
  assert.deepEqual(run.start(2), [0, 1]);
  run.finish(0, Failed);
  assert.deepEqual(run.block(), [[2, 0, Aborted]]);
  run.finish(1, Succeeded);
  assert.deepEqual(run.start(2), [], 'a blocked step never becomes ready');
  assert.ok(allStepsSettled(run.schedule));
});

test('downstream of a skip, steps are skipped; continueOn lets a failure or a skip through', () => {
  const chain = [{ depends: [] }, { depends: [0] }, { depends: [1] }];
  const skipped = runOf(chain);
  skipped.start(1);
  skipped.finish(0, Skipped);
  assert.deepEqual(skipped.block(), [[1, 0, Skipped], [2, 1, Skipped]]);
  const failed = runOf(chain);
  failed.start(1);
  failed.finish(0, Failed, true);
  assert.deepEqual(failed.block(), []);
  assert.deepEqual(failed.start(1), [1]);
  const skippedOn = runOf(chain);
  skippedOn.start(1);
  skippedOn.finish(0, Skipped, true);
  assert.deepEqual(skippedOn.start(1), [1]);
});

test('a fan-in joins after all its upstreams, a fan-out starts all its dependants at once', () => {
  // 0 -> 1..4 -> 5
  const steps = [{ depends: [] }, { depends: [0] }, { depends: [0] }, { depends: [0] }, { depends: [0] }, { depends: [1, 2, 3, 4] }];
  const run = runOf(steps);
  run.start(10);
  run.finish(0, Succeeded);
  assert.deepEqual(run.start(10), [1, 2, 3, 4]);
  for (const index of [4, 2, 1]) {
    run.finish(index, Succeeded);
    assert.deepEqual(run.start(10), []);
  }
  run.finish(3, Succeeded);
  assert.deepEqual(run.start(10), [5]);
});

test("kept results that continueOn let through meet their dependants again: failure, exit code, skip; not output", () => {
  const continueOn = (fields: object) => ({ failure: false, skipped: false, exitCode: [], output: [], markSuccess: false, ...fields });
  const steps = [
    { depends: [], continueOn: continueOn({ failure: true }) }, { depends: [0] },
    { depends: [], continueOn: continueOn({ exitCode: [3] }) }, { depends: [2] },
    { depends: [], continueOn: continueOn({ skipped: true }) }, { depends: [4] },
    { depends: [], continueOn: continueOn({ output: ['warn'] }) }, { depends: [6] },
  ];
  const statuses = [Failed, NotStarted, Failed, NotStarted, Skipped, NotStarted, Failed, NotStarted];
  const nodes = statuses.map(node);
  nodes[2] = { ...nodes[2], exitCode: 3 };
  const schedule = newSchedule(steps, nodes);
  assert.deepEqual(takeReady(schedule, 10), [1, 3, 5]);
  assert.deepEqual(takeBlocked(schedule, steps, (index) => nodes[index].status).map(({ index, culprit }) => [index, culprit]), [[7, 6]]);
});

test("a retry's kept results count at the start: success meets, any other result stops", () => {
  const steps = [{ depends: [] }, { depends: [0] }, { depends: [] }, { depends: [2] }, { depends: [] }, { depends: [4] }];
  const run = runOf(steps, [Succeeded, NotStarted, Failed, NotStarted, Skipped, Succeeded]);
  assert.equal(run.schedule.settled, 4);
  assert.deepEqual(run.block(), [[3, 2, Aborted]], 'step 5 keeps its result');
  assert.deepEqual(run.start(5), [1]);
  run.finish(1, Succeeded);
  assert.ok(allStepsSettled(run.schedule));
});

test('a step finishes once: a second report changes nothing', () => {
  const run = runOf([{ depends: [] }, { depends: [0] }]);
  run.start(1);
  run.finish(0, Succeeded);
  const before: Schedule = structuredClone(run.schedule);
  run.finish(0, Succeeded);
  assert.deepEqual(run.schedule, before);
});

test('an event reads only the steps it changes: the schedule of a 10,000-step chain never scans it', () => {
  let reads = 0;
  const steps = Array.from({ length: 10_000 }, (_, index) => ({ get depends() { reads++; return index === 0 ? [] : [index - 1]; } }));
  const run = runOf(steps);
  const built = reads;
  for (let index = 0; index < steps.length; index++) {
    assert.deepEqual(run.start(1), [index]);
    run.finish(index, index === 5_000 ? Failed : Succeeded);
    if (index === 5_000) break;
  }
  assert.equal(run.block().length, 4_999);
  assert.ok(allStepsSettled(run.schedule));
  // Building reads each step's dependencies twice; blocking reads those of each blocked step once.
  assert.ok(reads - built <= 4_999, `dependencies read ${reads - built} times after the schedule was built`);
});

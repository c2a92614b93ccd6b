import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord } from '../../core/index.ts';
import { blockedSteps, finalStatus, readySteps } from './progress.ts';

const node = (status: NodeStatus): NodeRecord => ({
  step: { name: 'x', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});
const { NotStarted, Running, Succeeded, Failed, Skipped } = NodeStatus;

test('ready steps respect dependencies and the free slots of maxActiveSteps', () => {
  const steps = [{ depends: [] }, { depends: [] }, { depends: [] }, { depends: [0, 1] }];
  assert.deepEqual(readySteps(steps, [node(NotStarted), node(NotStarted), node(NotStarted), node(NotStarted)], 2), [0, 1]);
  assert.deepEqual(readySteps(steps, [node(Running), node(NotStarted), node(NotStarted), node(NotStarted)], 2), [1]);
  assert.deepEqual(readySteps(steps, [node(Succeeded), node(Succeeded), node(Running), node(NotStarted)], 2), [3]);
  assert.deepEqual(readySteps(steps, [node(Succeeded), node(Failed), node(Succeeded), node(NotStarted)], 5), []);
});

test('steps downstream of a failure are blocked, transitively, naming the failed upstream', () => {
  const steps = [{ depends: [] }, { depends: [0] }, { depends: [1] }, { depends: [] }];
  const blocked = blockedSteps(steps, [node(Failed), node(NotStarted), node(NotStarted), node(NotStarted)]);
  assert.deepEqual([...blocked], [[1, { culprit: 0, status: NodeStatus.Aborted }], [2, { culprit: 1, status: NodeStatus.Aborted }]]);
});

test('downstream of a skip, steps are skipped; continueOn lets a failure or a skip through', () => {
  const steps = [{ depends: [] }, { depends: [0] }, { depends: [1] }];
  assert.deepEqual([...blockedSteps(steps, [node(Skipped), node(NotStarted), node(NotStarted)])],
    [[1, { culprit: 0, status: Skipped }], [2, { culprit: 1, status: Skipped }]]);
  assert.deepEqual([...blockedSteps(steps, [node(Failed), node(NotStarted), node(NotStarted)], [0])], []);
  assert.deepEqual(readySteps(steps, [node(Failed), node(NotStarted), node(NotStarted)], 1, [0]), [1]);
  assert.deepEqual(readySteps(steps, [node(Skipped), node(NotStarted), node(NotStarted)], 1, [0]), [1]);
});

test('partial success: every failure allowed by continueOn and followed by a step; else failed', () => {
  const chain = [{ depends: [] }, { depends: [0] }];
  assert.equal(finalStatus([node(Failed), node(Succeeded)], false, chain, [0]), RunStatus.PartiallySucceeded);
  assert.equal(finalStatus([node(Failed), node(Succeeded)], false, chain, []), RunStatus.Failed);
  assert.equal(finalStatus([node(Succeeded), node(Failed)], false, chain, [1]), RunStatus.Failed, 'nothing after the allowed failure');
  assert.equal(finalStatus([node(Skipped), node(Succeeded)], false, chain, [0]), RunStatus.Succeeded);
});

test('the final status is aborted when stopped, failed with any failure, else succeeded', () => {
  assert.equal(finalStatus([node(Succeeded)], true), RunStatus.Aborted);
  assert.equal(finalStatus([node(Succeeded), node(Failed)], false), RunStatus.Failed);
  assert.equal(finalStatus([node(Succeeded)], false), RunStatus.Succeeded);
});

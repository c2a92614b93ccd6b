import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord } from '../../core/index.ts';
import { blockedSteps, finalStatus, readySteps } from './progress.ts';

const node = (status: NodeStatus): NodeRecord => ({
  step: { name: 'x', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});
const { NotStarted, Running, Succeeded, Failed } = NodeStatus;

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
  assert.deepEqual([...blocked], [[1, 0], [2, 1]]);
});

test('the final status is aborted when stopped, failed with any failure, else succeeded', () => {
  assert.equal(finalStatus([node(Succeeded)], true), RunStatus.Aborted);
  assert.equal(finalStatus([node(Succeeded), node(Failed)], false), RunStatus.Failed);
  assert.equal(finalStatus([node(Succeeded)], false), RunStatus.Succeeded);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord } from '../../core/index.ts';
import { downstreamOf, finalStatus } from './progress.ts';

const node = (status: NodeStatus): NodeRecord => ({
  step: { name: 'x', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});
const { Succeeded, Failed, Skipped } = NodeStatus;

test('partial success: every failure allowed by continueOn and at least one node succeeded; else failed', () => {
  assert.equal(finalStatus([node(Failed), node(Succeeded)], false, [0]), RunStatus.PartiallySucceeded);
  assert.equal(finalStatus([node(Failed), node(Succeeded)], false, []), RunStatus.Failed);
  assert.equal(finalStatus([node(Succeeded), node(Failed)], false, [1]), RunStatus.PartiallySucceeded, 'the last step of a chain fails, allowed');
  assert.equal(finalStatus([node(Failed), node(Failed)], false, [0, 1]), RunStatus.Failed, 'nothing succeeded');
  assert.equal(finalStatus([node(Skipped), node(Succeeded)], false, [0]), RunStatus.Succeeded);
});

test('the final status is aborted when stopped, failed with any failure, else succeeded', () => {
  assert.equal(finalStatus([node(Succeeded)], true), RunStatus.Aborted);
  assert.equal(finalStatus([node(Succeeded), node(Failed)], false), RunStatus.Failed);
  assert.equal(finalStatus([node(Succeeded)], false), RunStatus.Succeeded);
});

test('downstream of a step: every step that depends on it, transitively, in any definition order', () => {
  // Defined last to first: a pass in definition order would find one step per pass.
  const reversed = [{ depends: [1] }, { depends: [2] }, { depends: [3] }, { depends: [] }, { depends: [] }];
  assert.deepEqual([...downstreamOf(reversed, [3])].sort(), [0, 1, 2, 3]);
  assert.deepEqual([...downstreamOf(reversed, [4])], [4]);
  assert.deepEqual([...downstreamOf([{ depends: [] }, { depends: [0] }, { depends: [0] }, { depends: [1, 2] }], [0])].sort(), [0, 1, 2, 3]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { parseDag } from '../definition/index.ts';
import { INTERRUPTED, resumption } from './resumption.ts';

const node = (status: NodeStatus, retryCount = 0): NodeRecord => ({
  step: { name: 'x', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});
const run = (nodes: NodeRecord[], parentDAGRunId = ''): RunRecord => ({ name: 'r', parentDAGRunId, nodes, status: RunStatus.Running } as RunRecord);
const dag = parseDag([
  'type: graph', 'steps:',
  '  - {name: done, command: x}',
  '  - {name: retries, command: x, depends: done, retryPolicy: {limit: 2, intervalSec: 0}}',
  '  - {name: none, command: x}',
  '  - {name: picky, command: x, retryPolicy: {limit: 2, exitCode: [75]}}',
  '  - {name: later, command: x, depends: retries}',
].join('\n'), { baseDir: '/d', fileName: 'r' }).dag!;
const at = '2026-11-25T00:00:00Z';

test('an interrupted step with retries left resumes the run: it runs again with the interruption counted, finished steps keep their results', () => {
  const prior = run([node(NodeStatus.Succeeded), node(NodeStatus.Running), node(NodeStatus.Running), node(NodeStatus.Running), node(NodeStatus.NotStarted)]);
  const attempt = resumption(dag, prior, at)!;
  assert.deepEqual([...attempt.rerun].sort(), [1, 4]);
  assert.deepEqual([...attempt.carried!], [[1, { retryCount: 1, error: INTERRUPTED }]]);
  // Without retries (or retried only on exit codes, which an interruption has none of): failed.
  assert.deepEqual(attempt.record.nodes.map((n) => [n.status, n.error]), [
    [NodeStatus.Succeeded, ''], [NodeStatus.Running, ''], [NodeStatus.Failed, INTERRUPTED], [NodeStatus.Failed, INTERRUPTED], [NodeStatus.NotStarted, ''],
  ]);
});

test('a run is not resumed when no interrupted step may retry, nor a sub DAG run on its own', () => {
  assert.equal(resumption(dag, run([node(NodeStatus.Succeeded), node(NodeStatus.Running, 2), node(NodeStatus.Running), node(NodeStatus.Running), node(NodeStatus.NotStarted)]), at), undefined);
  assert.equal(resumption(dag, run([node(NodeStatus.Succeeded), node(NodeStatus.NotStarted), node(NodeStatus.Succeeded), node(NodeStatus.Succeeded), node(NodeStatus.NotStarted)]), at), undefined);
  assert.equal(resumption(dag, run([node(NodeStatus.Succeeded), node(NodeStatus.Running), node(NodeStatus.Succeeded), node(NodeStatus.Succeeded), node(NodeStatus.NotStarted)], 'parent'), at), undefined);
  assert.deepEqual([...resumption(dag, run([node(NodeStatus.Succeeded), node(NodeStatus.Running, 1), node(NodeStatus.Succeeded), node(NodeStatus.Succeeded), node(NodeStatus.NotStarted)]), at)!.carried!],
    [[1, { retryCount: 2, error: INTERRUPTED }]], 'the last retry');
});

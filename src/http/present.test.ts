import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { runDetails, runDetailsParts } from './present.ts';

const runDetailsJson = (record: RunRecord) => Buffer.concat(runDetailsParts(record)).toString('utf8');

const node = (name: string, status: NodeStatus): NodeRecord => ({
  step: { name, executorConfig: { type: 'shell', config: {} } }, stdout: `/logs/${name}.out`, stderr: `/logs/${name}.err`,
  startedAt: '', finishedAt: '', status, retryCount: 0, doneCount: 0, error: 'say "hi"\n', subRuns: [], subRunsRepeated: [],
});

test('the details bytes are exactly the details object serialised, before and after a transition', () => {
  const record: RunRecord = {
    name: 'd', dagRunId: 'r', attemptId: 'a', rootDAGRunName: 'd', rootDAGRunId: 'r', parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Running, queuedAt: '', startedAt: '2026-01-01T00:00:00Z', finishedAt: '', log: '/logs/run.log', params: '{"A":"ü"}',
    createdAtMs: 0, nodes: [node('a', NodeStatus.Running), node('b', NodeStatus.NotStarted)],
  };
  assert.equal(runDetailsJson(record), JSON.stringify(runDetails(record)));
  const next: RunRecord = { ...record, nodes: [{ ...record.nodes[0], status: NodeStatus.Succeeded }, record.nodes[1]] };
  assert.equal(runDetailsJson(next), JSON.stringify(runDetails(next)));
  assert.deepEqual(JSON.parse(runDetailsJson(next)).nodes.map((n: { statusLabel: string }) => n.statusLabel), ['succeeded', 'not_started']);
});

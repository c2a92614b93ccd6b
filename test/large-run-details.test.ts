// Every answer that holds a whole run, for a run of 10,000 nodes (a finished run written through the
// server's own store: running 10,000 processes is the benchmark's, bench/large-dag.ts): complete, in
// node order, with each node's status, the same bytes whichever route answers; and read again, it
// is answered from what was rendered (nothing encoded again). Timing is never asserted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, nodeStatusLabel, type NodeRecord, type RunRecord } from '../src/core/index.ts';
import { nodeBlocksEncoded } from '../src/http/present.ts';
import { sharedServer } from './helpers.ts';

const STEPS = 10_000;
const server = sharedServer('uws');

/** Succeeded, failed, skipped, aborted in turn: a node's status tells its index. */
const statusOf = (index: number) => [NodeStatus.Succeeded, NodeStatus.Failed, NodeStatus.Skipped, NodeStatus.Aborted][index % 4];

function bigRun(name: string, dagRunId: string): RunRecord {
  const nodes: NodeRecord[] = Array.from({ length: STEPS }, (_, index) => ({
    step: { name: `s${index}`, command: 'true', ...(index > 0 ? { depends: [`s${index - 1}`] } : {}), executorConfig: { type: 'shell', config: {} } },
    stdout: `/logs/s${index}.out`, stderr: `/logs/s${index}.err`, startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:01.000Z',
    status: statusOf(index), retryCount: 0, doneCount: 1, error: index === 4321 ? 'échec "cité"\n' : '', subRuns: [], subRunsRepeated: [],
  }));
  return {
    name, dagRunId, attemptId: 'a1', rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Failed, queuedAt: '', startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:02.000Z', log: '/logs/run.log',
    params: '{}', nodes, fileName: name, createdAtMs: Date.now(),
  };
}

function assertComplete(run: any): void {
  assert.equal(run.statusLabel, 'failed');
  assert.equal(run.nodes.length, STEPS);
  run.nodes.forEach((node: any, index: number) => {
    if (node.step.name !== `s${index}` || node.status !== statusOf(index) || node.statusLabel !== nodeStatusLabel(statusOf(index))) {
      assert.fail(`node ${index}: ${JSON.stringify(node)}`);
    }
  });
  assert.equal(run.nodes[4321].error, 'échec "cité"\n');
  assert.deepEqual(run.nodes[1].step.depends, ['s0']);
}

test('the details of a run of 10,000 nodes are complete and in order, and a second read encodes nothing', async () => {
  await server.troupe.runs.save(bigRun('big-details', 'r1'));
  const first = await server.call('GET', '/dag-runs/big-details/r1');
  assert.equal(first.status, 200);
  assertComplete(first.body.dagRun);
  assert.deepEqual(first.body.dagRunDetails, first.body.dagRun);
  const encoded = nodeBlocksEncoded();
  const again = await server.call('GET', '/dag-runs/big-details/r1');
  assert.equal(again.text, first.text);
  assert.equal(nodeBlocksEncoded(), encoded, 'the second read encoded nodes again');
  const latest = await server.call('GET', '/dag-runs/big-details/latest');
  assert.equal(latest.text, first.text);
});

test('a stored DAG of 10,000 steps: its details, its run and its history show every node', async () => {
  const spec = 'steps:\n' + Array.from({ length: STEPS }, (_, index) => `  - name: s${index}\n    command: "true"\n`).join('');
  await server.writeDag('big-history', spec);
  await server.troupe.runs.save(bigRun('big-history', 'h1'));
  const dag = await server.call('GET', '/dags/big-history');
  assert.equal(dag.status, 200);
  assertComplete(dag.body.latestDAGRun);
  assert.equal(dag.body.dag.steps.length, STEPS);
  assert.equal(dag.body.suspended, false);
  const run = await server.call('GET', '/dags/big-history/dag-runs/h1');
  assertComplete(run.body.dagRun);
  const history = await server.call('GET', '/dags/big-history/dag-runs');
  assert.equal(history.status, 200);
  assert.equal(history.body.dagRuns.length, 1);
  assertComplete(history.body.dagRuns[0]);
  assert.equal(history.body.gridData.length, STEPS);
  history.body.gridData.forEach((row: any, index: number) => {
    if (row.name !== `s${index}` || row.history.length !== 1 || row.history[0] !== statusOf(index)) assert.fail(`grid row ${index}: ${JSON.stringify(row)}`);
  });
});

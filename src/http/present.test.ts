import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { NODE_BLOCK, nodeBlocksEncoded, runDetails, runDetailsDocument, runDetailsParts } from './present.ts';

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

test('a large run is encoded a block of nodes at a time: a transition re-encodes the block it changed, a record read again nothing', async () => {
  const nodes = Array.from({ length: 1000 }, (_, index) => node(`s${index}`, NodeStatus.Succeeded));
  // Text beyond ASCII in one block: its bytes are UTF-8, the other blocks' the same as Latin-1.
  nodes[700] = { ...nodes[700], error: 'échec ✗ 😀' };
  const record: RunRecord = {
    name: 'big', dagRunId: 'r', attemptId: 'a', rootDAGRunName: 'big', rootDAGRunId: 'r', parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Running, queuedAt: '', startedAt: '', finishedAt: '', log: '/logs/run.log', params: '{}', createdAtMs: 0, nodes,
  };
  const keys = ['dagRun', 'dagRunDetails'];
  const expected = (run: RunRecord) => JSON.stringify({ dagRun: runDetails(run), dagRunDetails: runDetails(run) });
  const before = nodeBlocksEncoded();
  const body = await runDetailsDocument(record, keys);
  assert.equal(body.toString('utf8'), expected(record));
  assert.equal(nodeBlocksEncoded() - before, Math.ceil(1000 / NODE_BLOCK));
  // The same record again: the same bytes, nothing encoded.
  assert.equal(await runDetailsDocument(record, keys), body);
  assert.equal(nodeBlocksEncoded() - before, Math.ceil(1000 / NODE_BLOCK));
  // One node changed (a new record, as a transition makes): one block encoded again.
  const changed = record.nodes.slice();
  changed[999] = { ...changed[999], status: NodeStatus.Failed, error: 'boom' };
  const next: RunRecord = { ...record, status: RunStatus.Failed, nodes: changed };
  assert.equal((await runDetailsDocument(next, keys)).toString('utf8'), expected(next));
  assert.equal(nodeBlocksEncoded() - before, Math.ceil(1000 / NODE_BLOCK) + 1);
  const read = JSON.parse((await runDetailsDocument(next, ['dagRun'])).toString('utf8'));
  assert.deepEqual(read.dagRun.nodes.map((n: { step: { name: string } }) => n.step.name), nodes.map((_, index) => `s${index}`));
  assert.equal(read.dagRun.nodes[700].error, 'échec ✗ 😀');
  assert.equal(read.dagRun.nodes[999].statusLabel, 'failed');
});

test('the first read of a large run yields to the event loop between blocks; the answer is the same', async () => {
  const nodes = Array.from({ length: 5000 }, (_, index) => node(`s${index}`, NodeStatus.Succeeded));
  const record: RunRecord = {
    name: 'big', dagRunId: 'r2', attemptId: 'a', rootDAGRunName: 'big', rootDAGRunId: 'r2', parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Succeeded, queuedAt: '', startedAt: '', finishedAt: '', log: '', params: '{}', createdAtMs: 0, nodes,
  };
  const order: string[] = [];
  const rendering = runDetailsDocument(record, ['dagRun']).then((body) => { order.push('rendered'); return body; });
  setImmediate(() => order.push('another request'));
  const body = await rendering;
  assert.deepEqual(order, ['another request', 'rendered']);
  assert.equal(body.toString('utf8'), JSON.stringify({ dagRun: runDetails(record) }));
});

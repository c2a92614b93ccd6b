import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../../core/index.ts';
import { parseDag } from '../../definition/index.ts';
import { rerunSelection } from './attempt.ts';

const node = (status: NodeStatus): NodeRecord => ({
  step: { name: 'x', executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});

test('a retry runs failed, aborted and unfinished nodes and what follows them; stepName runs one step', () => {
  const dag = parseDag('type: graph\nsteps:\n  - {name: a, command: x}\n  - {name: b, command: x, depends: a}\n  - {name: c, command: x}\n  - {name: d, command: x, depends: c}\n  - {name: e, command: x}\n', { baseDir: '/d', fileName: 'r' }).dag!;
  const prior = { name: 'r', nodes: [node(NodeStatus.Succeeded), node(NodeStatus.Succeeded), node(NodeStatus.Failed), node(NodeStatus.Aborted), node(NodeStatus.Skipped)], status: RunStatus.Failed } as RunRecord;
  assert.deepEqual([...rerunSelection(dag, prior)].sort(), [2, 3]);
  assert.deepEqual([...rerunSelection(dag, { ...prior, nodes: [node(NodeStatus.Failed), ...prior.nodes.slice(1)] })].sort(), [0, 1, 2, 3]);
  assert.deepEqual([...rerunSelection(dag, prior, 'b')], [1]);
  assert.throws(() => rerunSelection(dag, prior, 'zz'), { code: 'not_found' });
});

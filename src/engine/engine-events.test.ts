import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import type { EventBody } from '../core/index.ts';
import { RunTransitions } from './engine-events.ts';

const node = (name: string, status: NodeStatus): NodeRecord => ({
  step: { name, executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});

const base: RunRecord = {
  name: 'big', dagRunId: 'r1', attemptId: 'a', rootDAGRunName: 'big', rootDAGRunId: 'r1', parentDAGRunName: '', parentDAGRunId: '',
  status: RunStatus.Running, queuedAt: '', startedAt: '', finishedAt: '', log: '', params: '', createdAtMs: 0,
  nodes: Array.from({ length: 10_000 }, (_, index) => node(`s${index}`, NodeStatus.NotStarted)),
};

test("a run's events compare only the nodes its writes named, not every node on every write", () => {
  const events = new RunTransitions();
  const heard: EventBody[] = [];
  let reads = 0;
  const counted = (nodes: NodeRecord[]) => new Proxy(nodes, {
    get: (target, key, receiver) => {
      if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });

  heard.push(...events.announced(base));
  let nodes = base.nodes;
  for (let index = 0; index < 100; index++) {
    nodes = nodes.slice();
    nodes[index] = node(`s${index}`, NodeStatus.Succeeded);
    nodes[index + 1] = node(`s${index + 1}`, NodeStatus.Running);
    reads = 0;
    heard.push(...events.of({ ...base, nodes: counted(nodes) }, [index, index + 1]));
    assert.ok(reads <= 2, `write ${index} read ${reads} nodes`);
  }
  heard.push(...events.of({ ...base, status: RunStatus.Succeeded, nodes }, []));
  const types = heard.map((event) => `${event.type}${'stepName' in event ? ` ${event.stepName}` : ''}`);
  assert.deepEqual(types.slice(0, 5), ['run.running', 'step.succeeded s0', 'step.running s1', 'step.succeeded s1', 'step.running s2']);
  assert.equal(types.at(-1), 'run.succeeded');
  assert.equal(types.length, 1 + 2 * 100 + 1);
});

test("a run's end forgets it: the next attempt of the same id is told from its start", () => {
  const events = new RunTransitions();
  const nodes = base.nodes.slice(0, 2);
  const types = (list: EventBody[]) => list.map((event) => event.type);
  assert.deepEqual(types(events.announced({ ...base, nodes })), ['run.running']);
  assert.deepEqual(types(events.of({ ...base, nodes: [node('s0', NodeStatus.Running), nodes[1]] }, [0])), ['step.running']);
  assert.deepEqual(types(events.of({ ...base, status: RunStatus.Failed, nodes: [node('s0', NodeStatus.Failed), nodes[1]] }, [0])), ['step.failed', 'run.failed']);
  assert.deepEqual(types(events.announced({ ...base, nodes: [node('s0', NodeStatus.Failed), nodes[1]] })), ['run.running', 'step.failed'], 'a retry is a new attempt: its carried nodes are told again');
});

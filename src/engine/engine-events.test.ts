import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { StatusEvents, type EngineEvent } from './engine-events.ts';

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
  const events = new StatusEvents();
  const heard: EngineEvent[] = [];
  events.subscribe((event) => heard.push(event));
  let reads = 0;
  const counted = (nodes: NodeRecord[]) => new Proxy(nodes, {
    get: (target, key, receiver) => {
      if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });

  events.announce(base);
  let nodes = base.nodes;
  for (let index = 0; index < 100; index++) {
    nodes = nodes.slice();
    nodes[index] = node(`s${index}`, NodeStatus.Succeeded);
    nodes[index + 1] = node(`s${index + 1}`, NodeStatus.Running);
    reads = 0;
    events.observe({ ...base, nodes: counted(nodes) }, [index, index + 1]);
    assert.ok(reads <= 2, `write ${index} read ${reads} nodes`);
  }
  events.observe({ ...base, status: RunStatus.Succeeded, nodes }, []);
  const types = heard.map((event) => `${event.type}${'stepName' in event ? ` ${event.stepName}` : ''}`);
  assert.deepEqual(types.slice(0, 5), ['run.running', 'step.succeeded s0', 'step.running s1', 'step.succeeded s1', 'step.running s2']);
  assert.equal(types.at(-1), 'run.succeeded');
  assert.equal(types.length, 1 + 2 * 100 + 1);
});

test('with no listener a write costs nothing; a listener that comes mid-run hears the run and its nodes as they are', () => {
  const events = new StatusEvents();
  let reads = 0;
  const counted = new Proxy(base.nodes, {
    get: (target, key, receiver) => {
      if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  events.observe({ ...base, nodes: counted }, [0, 1, 2]);
  assert.equal(reads, 0);
  const heard: string[] = [];
  const unsubscribe = events.subscribe((event) => heard.push(event.type));
  const nodes = base.nodes.slice(0, 3).map((item, index) => (index === 0 ? node('s0', NodeStatus.Running) : item));
  events.observe({ ...base, nodes }, [0]);
  assert.deepEqual(heard, ['run.running', 'step.running']);
  unsubscribe();
  events.observe({ ...base, status: RunStatus.Failed, nodes }, []);
  assert.deepEqual(heard, ['run.running', 'step.running'], 'nothing after the last listener left');
});

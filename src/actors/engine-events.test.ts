import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InspectionEvent } from 'xstate';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../core/index.ts';
import { StatusEvents, type EngineEvent } from './engine-events.ts';

const node = (name: string, status: NodeStatus): NodeRecord => ({
  step: { name, executorConfig: { config: {} } }, stdout: '', stderr: '', startedAt: '', finishedAt: '',
  status, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [],
});

test("a run's events compare only the nodes its writes named, not every node on every snapshot", () => {
  let observer!: (event: InspectionEvent) => void;
  const events = new StatusEvents();
  events.attach({ inspect: (next) => { observer = next; return { unsubscribe() {} }; } });
  const heard: EngineEvent[] = [];
  events.subscribe((event) => heard.push(event));
  const actorRef = { id: 'run:big:r1' };
  let reads = 0;
  const counted = (nodes: NodeRecord[]) => new Proxy(nodes, {
    get: (target, key, receiver) => {
      if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  const base: RunRecord = {
    name: 'big', dagRunId: 'r1', attemptId: 'a', rootDAGRunName: 'big', rootDAGRunId: 'r1', parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Running, queuedAt: '', startedAt: '', finishedAt: '', log: '', params: '', createdAtMs: 0,
    nodes: Array.from({ length: 10_000 }, (_, index) => node(`s${index}`, NodeStatus.NotStarted)),
  };
  const snapshot = (record: RunRecord, status = 'active') =>
    observer({ type: '@xstate.snapshot', actorRef, snapshot: { status, context: { record } } } as unknown as InspectionEvent);
  const persist = (changed: number[]) =>
    observer({ type: '@xstate.action', actorRef, action: { type: 'persist', params: { changed } } } as unknown as InspectionEvent);

  snapshot(base);
  let nodes = base.nodes;
  for (let index = 0; index < 100; index++) {
    nodes = nodes.slice();
    nodes[index] = node(`s${index}`, NodeStatus.Succeeded);
    nodes[index + 1] = node(`s${index + 1}`, NodeStatus.Running);
    persist([index]);
    persist([index + 1]);
    reads = 0;
    snapshot({ ...base, nodes: counted(nodes) });
    assert.ok(reads <= 2, `snapshot ${index} read ${reads} nodes`);
  }
  snapshot({ ...base, status: RunStatus.Succeeded, nodes }, 'done');
  const types = heard.map((event) => `${event.type}${'stepName' in event ? ` ${event.stepName}` : ''}`);
  assert.deepEqual(types.slice(0, 5), ['run.running', 'step.succeeded s0', 'step.running s1', 'step.succeeded s1', 'step.running s2']);
  assert.equal(types.at(-1), 'run.succeeded');
  assert.equal(types.length, 1 + 2 * 100 + 1);
});

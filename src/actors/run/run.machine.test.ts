// The run actor and its step actors on their own, each execution answered at once by a stand-in
// executor: what a large run costs in scheduling work, counted rather than timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createActor, fromCallback, type AnyActorRef } from 'xstate';
import { NodeStatus, RunStatus, type LogStore, type RunRecord, type StepResult } from '../../core/index.ts';
import { parseDag } from '../../definition/index.ts';
import { stepMachine, type ExecutorInput } from '../step/step.machine.ts';
import { attemptRecord } from './attempt.ts';
import { planRun } from './plan.ts';
import { runMachine, type RunInput } from './run.machine.ts';

const logs = {
  runLogPath: () => '/nowhere/run.log',
  stepPaths: () => ({ stdout: '/nowhere/out', stderr: '/nowhere/err', script: '/nowhere/script' }),
} as unknown as LogStore;

async function inputOf(spec: string): Promise<RunInput> {
  const dag = parseDag(spec, { baseDir: '/nowhere', fileName: 'large' }).dag!;
  const plan = await planRun({ dag, name: 'large', dagRunId: 'r1', attemptId: 'a1', params: [], systemEnv: {}, logs });
  return { plan, record: await attemptRecord({ dag, plan, params: [], now: 0 }) };
}

/** Runs the actor to its end; each step's result comes from `answer`, by the step's name, at once. */
function runToEnd(input: RunInput, answer: (name: string) => StepResult) {
  const executeStep = fromCallback<{ type: 'step.stop' }, ExecutorInput>(({ input: execution, sendBack }) => {
    sendBack({ type: 'step.exited', result: answer(execution.task!.env.DAG_RUN_STEP_NAME), at: 0 });
  });
  const step = stepMachine.provide({ actors: { executeStep } });
  let record: RunRecord | undefined;
  let mostChildren = 0;
  const run = runMachine.provide({
    actors: { step },
    actions: {
      persist: ({ self }, { record: written }) => {
        record = written;
        mostChildren = Math.max(mostChildren, Object.keys((self as AnyActorRef).getSnapshot().children).length);
      },
      finished: (_, { status }) => { finished = status; },
    },
  });
  let finished: RunStatus | undefined;
  createActor(run, { input }).start();
  return { status: finished, record: record!, mostChildren };
}

test('a run of 2,000 chained steps reads each step a bounded number of times, and keeps no finished step actor', async () => {
  const steps = 2_000;
  const input = await inputOf('steps:\n' + Array.from({ length: steps }, (_, index) => `  - name: s${index}\n    command: "true"\n`).join(''));
  // Counted on the first record's objects: a node changed by the run is a new object, a plain one.
  let reads = 0;
  for (const step of input.plan.steps) {
    const depends = step.depends;
    Object.defineProperty(step, 'depends', { enumerable: true, get: () => { reads++; return depends; } });
  }
  for (const node of input.record.nodes) {
    const status = node.status;
    Object.defineProperty(node, 'status', { enumerable: true, get: () => { reads++; return status; } });
  }
  const { status, record, mostChildren } = runToEnd(input, () => ({ kind: 'ok', exitCode: 0 }));
  assert.equal(status, RunStatus.Succeeded);
  assert.ok(record.nodes.every((node) => node.status === NodeStatus.Succeeded));
  // A few reads per step (building the schedule, starting, finishing); scanning the nodes after
  // each event read them about 10,000,000 times.
  assert.ok(reads <= 10 * steps, `steps and nodes read ${reads} times`);
  // XState copies the map of a run's child actors on every spawn and stop.
  assert.ok(mostChildren <= 2, `the run held ${mostChildren} step actors at once`);
});

test('a failure in a fan-out aborts its branch and the join, naming the upstream; the other branches run', async () => {
  const input = await inputOf([
    'type: graph', 'maxActiveSteps: 4', 'steps:',
    '  - {name: root, command: "true"}',
    ...Array.from({ length: 6 }, (_, index) => `  - {name: b${index}, command: "true", depends: root}`),
    '  - {name: after3, command: "true", depends: b3}',
    '  - {name: join, command: "true", depends: [after3, b0, b1, b2, b4, b5]}', '',
  ].join('\n'));
  const { status, record } = runToEnd(input, (name) => (name === 'b3' ? { kind: 'ok', exitCode: 1, error: 'exit status 1' } : { kind: 'ok', exitCode: 0 }));
  assert.equal(status, RunStatus.Failed);
  const byName = Object.fromEntries(record.nodes.map((node) => [node.step.name, node]));
  for (const name of ['root', 'b0', 'b1', 'b2', 'b4', 'b5']) assert.equal(byName[name].status, NodeStatus.Succeeded, name);
  assert.equal(byName.b3.status, NodeStatus.Failed);
  assert.equal(byName.after3.status, NodeStatus.Aborted);
  assert.equal(byName.after3.error, 'upstream step "b3" did not succeed');
  assert.equal(byName.join.status, NodeStatus.Aborted);
  assert.equal(byName.join.error, 'upstream step "after3" did not succeed');
});

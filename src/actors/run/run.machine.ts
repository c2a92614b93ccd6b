// A DAG run actor. Its context is the run record plus the plan: plain data, persisted on every
// transition through the `persist` action the engine provides. Step actors do the work; the
// record updates themselves are pure functions in run-updates.ts.
import { enqueueActions, sendParent, setup } from 'xstate';
import { NodeStatus, RunStatus, isoTime, type RunRecord } from '../../core/index.ts';
import { stepMachine, type StepFinishedEvent, type StepRerunEvent } from '../step/step.machine.ts';
import { needsCommands, stepTask, type RunPlan } from './plan.ts';
import { allSettled, anyRunning, blockedSteps, finalStatus, readySteps } from './progress.ts';
import { endRun, finishStep, rerunStep, runStartedLine, startSteps, type RunState } from './run-updates.ts';
import { logLine } from './log-line.ts';

export interface RunInput {
  record: RunRecord;
  plan: RunPlan;
}

export type RunContext = RunState;

export type RunEvent =
  | { type: 'run.begin'; at: number }
  | { type: 'run.stop'; at: number }
  | StepFinishedEvent
  | StepRerunEvent;

export interface RunFinishedEvent {
  type: 'run.finished';
  name: string;
  dagRunId: string;
  status: RunStatus;
  log: string;
}

/** Every event carries its time; a run that begins with its actor uses the recorded start. */
function eventTime(event: { type: string; at?: number }, context: RunContext): number {
  // A timer's event carries no time: it fired at the run's start plus its delay.
  return event.at ?? Date.parse(context.record.startedAt) + (context.delayed ? context.plan.delaySec * 1000 : 0);
}

/** The status the run ends with, from its nodes (progress.ts). */
function runOutcome(context: RunContext): RunStatus {
  return finalStatus(context.record.nodes, context.stopRequested, context.plan.steps, context.continued, context.timedOut);
}

/** Timers above Node's largest (24.8 days) would fire at once; a longer deadline waits that long. */
function timerMs(seconds: number): number {
  return Math.min(seconds * 1000, 2_147_483_647);
}

const effects = setup({
  types: {
    context: {} as RunContext,
    events: {} as RunEvent,
    input: {} as RunInput,
  },
  actors: { step: stepMachine },
  actions: {
    // Provided by the engine: write the record to the store; append a line to the run log.
    persist: (_, _params: { record: RunRecord }) => {},
    appendLog: (_, _params: { path: string; line: string }) => {},
  },
  delays: {
    runDelay: ({ context }) => context.plan.delaySec * 1000,
    dagTimeout: ({ context }) => (context.plan.timeoutSec > 0 ? timerMs(context.plan.timeoutSec) : 2_147_483_647),
  },
  guards: {
    beginsAtOnce: ({ context }) => context.record.status === RunStatus.Running,
    noDelay: ({ context }) => context.plan.delaySec <= 0,
    hasDagTimeout: ({ context }) => context.plan.timeoutSec > 0,
    allSettled: ({ context }) => allSettled(context.record.nodes),
    hasStepsToStart: ({ context }) =>
      readySteps(context.plan.steps, context.record.nodes, context.plan.maxActiveSteps, context.continued).length > 0 ||
      blockedSteps(context.plan.steps, context.record.nodes, context.continued).size > 0,
    noneRunning: ({ context }) => !anyRunning(context.record.nodes),
    endsAborted: ({ context }) => runOutcome(context) === RunStatus.Aborted,
    endsFailed: ({ context }) => runOutcome(context) === RunStatus.Failed,
    endsPartially: ({ context }) => runOutcome(context) === RunStatus.PartiallySucceeded,
  },
});

export const runMachine = effects.extend({
  actions: {
    logRunStarted: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      enqueue({ type: 'appendLog', params: { path: context.record.log, line: runStartedLine(context.record, eventTime(event, context)) } });
    })),
    // The step is recorded as started (its write queued) before its actor is spawned and dispatches it.
    startReadySteps: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      const { record, started, lines } = startSteps(context, eventTime(event, context));
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record } });
      for (const line of lines) enqueue({ type: 'appendLog', params: { path: record.log, line } });
      for (const index of started) {
        enqueue.spawnChild('step', {
          id: `step-${index}`,
          input: {
            index,
            preconditions: context.plan.steps[index].preconditions,
            timeoutSec: context.plan.steps[index].timeoutSec,
            retryPolicy: context.plan.steps[index].retryPolicy,
            repeatPolicy: context.plan.steps[index].repeatPolicy,
            ...(needsCommands(context.plan, index)
              ? { pending: { plan: context.plan, index, outputs: context.outputs, nodes: record.nodes } }
              : { task: stepTask(context.plan, index, context.outputs, record.nodes) }),
            signalOnStop: context.plan.steps[index].signalOnStop,
            cleanupMs: context.plan.maxCleanUpTimeSec * 1000,
          },
        });
      }
    })),
    recordRerun: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'step.rerun') return;
      const { record, line } = rerunStep(context, event);
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
    })),
    recordStepResult: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'step.finished') return;
      const { record, outputs, continued, line } = finishStep(context, event);
      enqueue.assign({ record, outputs, continued });
      enqueue({ type: 'persist', params: { record } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
    })),
    markTimedOut: effects.createAction(enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ timedOut: true });
      // The deadline is when the timer fired: the run's start plus its timeout.
      const at = Date.parse(context.record.startedAt) + context.plan.timeoutSec * 1000;
      const line = logLine(at, 'ERROR', 'DAG run timed out', {
        dag: context.record.name, 'run-id': context.record.dagRunId, timeout: `${context.plan.timeoutSec}s`,
      });
      enqueue({ type: 'appendLog', params: { path: context.record.log, line } });
    })),
    stopRunningSteps: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ stopRequested: true });
      const at = 'at' in event && typeof event.at === 'number' ? event.at : undefined;
      context.record.nodes.forEach((node, index) => {
        if (node.status === NodeStatus.Running) enqueue.sendTo(`step-${index}`, { type: 'step.stop', at });
      });
    })),
    recordRunEnd: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      const status = runOutcome(context);
      const { record, line } = endRun(context, status, eventTime(event, context));
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
      enqueue(sendParent({ type: 'run.finished', name: record.name, dagRunId: record.dagRunId, status, log: record.log } satisfies RunFinishedEvent));
    })),
  },
}).createMachine({
  id: 'dagRun',
  initial: 'queued',
  context: ({ input }) => ({ ...input, outputs: {}, stopRequested: false, continued: [], timedOut: false, delayed: false }),
  on: {
    'step.finished': { actions: 'recordStepResult' },
    'step.rerun': { actions: 'recordRerun' },
  },
  states: {
    queued: {
      always: { guard: 'beginsAtOnce', target: 'active' },
      on: {
        'run.begin': {
          target: 'active',
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue.assign({ record: { ...context.record, status: RunStatus.Running, startedAt: isoTime(event.at) } });
          }),
        },
        'run.stop': { target: 'aborted', actions: enqueueActions(({ enqueue }) => enqueue.assign({ stopRequested: true })) },
      },
    },
    // The run's time counts from here: delaySec, then the steps; timeoutSec covers both.
    active: {
      entry: 'logRunStarted',
      initial: 'delaying',
      after: { dagTimeout: { guard: 'hasDagTimeout', target: 'stopping', actions: 'markTimedOut' } },
      on: { 'run.stop': 'stopping' },
      states: {
        delaying: {
          always: { guard: 'noDelay', target: 'running' },
          after: { runDelay: { target: 'running', actions: enqueueActions(({ enqueue }) => enqueue.assign({ delayed: true })) } },
        },
        running: {
          // Re-evaluated after every event: settle when all nodes are done, else start what is ready.
          always: [
            { guard: 'allSettled', target: '#dagRun.settled' },
            { guard: 'hasStepsToStart', actions: 'startReadySteps' },
          ],
        },
      },
    },
    stopping: {
      entry: 'stopRunningSteps',
      always: { guard: 'noneRunning', target: 'settled' },
    },
    settled: {
      always: [
        { guard: 'endsAborted', target: 'aborted' },
        { guard: 'endsFailed', target: 'failed' },
        { guard: 'endsPartially', target: 'partiallySucceeded' },
        { target: 'succeeded' },
      ],
    },
    succeeded: { type: 'final', entry: 'recordRunEnd' },
    partiallySucceeded: { type: 'final', entry: 'recordRunEnd' },
    failed: { type: 'final', entry: 'recordRunEnd' },
    aborted: { type: 'final', entry: 'recordRunEnd' },
  },
});

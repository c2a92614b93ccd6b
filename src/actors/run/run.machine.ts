// A DAG run actor. Its context is the run record plus the plan: plain data, persisted on every
// transition through the `persist` action the engine provides. Step actors do the work; the
// record updates themselves are pure functions in run-updates.ts.
import { enqueueActions, fromPromise, setup } from 'xstate';
import { HANDLER_NODE_NAMES, NodeStatus, RunStatus, isoTime, runStatusLabel, type HandlerKind, type RunRecord, type RunSpan, type RunTrace } from '../../core/index.ts';
import { stepMachine, type StepFinishedEvent, type StepInput, type StepRerunEvent, type StepSubRunEvent } from '../step/step.machine.ts';
import { failed } from '../step/policies.ts';
import { handlerTask, hasConditions, needsCommands, stepResults, stepTask, type RunPlan } from './plan.ts';
import { finalStatus } from './progress.ts';
import { allStepsSettled, hasStepsToStart, newSchedule, Outcome } from './schedule.ts';
import { addSubRun, endRun, finishHandler, finishStep, rerunStep, runStartedLines, startHandler, startSteps, type RunState } from './run-updates.ts';
import { logLine } from './log-line.ts';
import { eventSpan, runSpan } from './run-spans.ts';

export interface RunInput {
  record: RunRecord;
  plan: RunPlan;
  /** A DAG-level precondition did not hold (its message): no step runs, the exit handler does. */
  unmet?: string;
}

export type RunContext = RunState;

/** How the start or the removal of a DAG-level container went: when it ended, and why it failed. */
export interface ServiceOutcome {
  at: number;
  error?: string;
}

export type RunEvent =
  | { type: 'run.begin'; at: number }
  | { type: 'run.stop'; at: number }
  /** Delayed events the run raises itself: timeoutSec has passed; delaySec has passed. */
  | { type: 'run.timeout' }
  | { type: 'run.delayed' }
  | StepFinishedEvent
  | StepRerunEvent
  | StepSubRunEvent;

export interface RunFinishedEvent {
  type: 'run.finished';
  name: string;
  dagRunId: string;
  status: RunStatus;
  log: string;
}

/** Every event carries its time; a run that begins with its actor uses the recorded start. */
function eventTime(event: { type: string; at?: number; output?: unknown }, context: RunContext): number {
  if (event.at !== undefined) return event.at;
  // The DAG-level container's start and removal report when they ended (ServiceOutcome).
  const output = event.output as Partial<ServiceOutcome> | undefined;
  if (typeof output?.at === 'number') return output.at;
  // A timer's event carries no time: it fired at the run's start plus its delay.
  return Date.parse(context.record.startedAt) + (context.delayed ? context.plan.delaySec * 1000 : 0);
}

/** The status the run ends with, from its nodes (progress.ts). */
function runOutcome(context: RunContext): RunStatus {
  // The steps that met their dependants: finalStatus reads among them the failures continueOn let through.
  const met = context.schedule.outcome.flatMap((outcome, index) => (outcome === Outcome.Met ? [index] : []));
  return finalStatus(context.record.nodes, context.stopRequested, met, context.timedOut);
}

/** The handler that answers the run's outcome: after a failed init handler, the abort handler (docs/api.md, Handlers). */
function outcomeHandler(context: RunContext): HandlerKind | undefined {
  const kind: HandlerKind = context.outcome === RunStatus.Aborted ? 'abort' : context.outcome === RunStatus.Failed ? 'failure' : 'success';
  return context.plan.handlers[kind] ? kind : undefined;
}

/** A handler's event: `kind` says which one the state waits for (an earlier one may still report). */
const handlerDone = (kind: HandlerKind | 'outcome') => ({ context, event }: { context: RunContext; event: RunEvent }) =>
  event.type === 'step.finished' && event.handler !== undefined && (kind === 'outcome' ? event.handler === outcomeHandler(context) : event.handler === kind);

const DAG_TIMEOUT_ID = 'dagTimeout';
const DELAY_ID = 'runDelay';

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
  actors: {
    step: stepMachine,
    // Provided by the engine (run-services.ts): start what the run's steps share (its DAG-level
    // container) before the first step; remove it after the last handler. Neither rejects.
    prepareServices: fromPromise<ServiceOutcome, RunPlan>(async () => ({ at: Date.now() })),
    releaseServices: fromPromise<ServiceOutcome, RunPlan>(async () => ({ at: Date.now() })),
  },
  actions: {
    // Provided by the engine: write the record to the store; append a line to the run log.
    // `changed`: the nodes this record changed since the one before (the store writes only those).
    persist: (_, _params: { record: RunRecord; changed: readonly number[] }) => {},
    appendLog: (_, _params: { path: string; line: string }) => {},
    // Provided by the engine: the run's notification mail when it ends; a failed step's with mailOnError.
    mailRunEnd: (_, _params: { plan: RunPlan; record: RunRecord }) => {},
    mailStepError: (_, _params: { plan: RunPlan; record: RunRecord; index: number }) => {},
    // Provided by the run dispatcher: the run reached its final state, its final record written.
    finished: (_, _params: RunFinishedEvent) => {},
    // Provided by the engine: a span of a traced run (run-spans.ts), to export.
    traceSpan: (_, _params: { trace: RunTrace; span: RunSpan }) => {},
    // Timers are delayed events raised only when the run has a timeout or a delay: `after`
    // transitions would set (and clear) their timers on every run.
    armDagTimeout: enqueueActions(({ context, enqueue }) => {
      if (context.plan.timeoutSec > 0) enqueue.raise({ type: 'run.timeout' }, { id: DAG_TIMEOUT_ID, delay: timerMs(context.plan.timeoutSec) });
    }),
    disarmDagTimeout: enqueueActions(({ context, enqueue }) => {
      if (context.plan.timeoutSec > 0) enqueue.cancel(DAG_TIMEOUT_ID);
    }),
    armDelay: enqueueActions(({ context, enqueue }) => {
      if (context.plan.delaySec > 0) enqueue.raise({ type: 'run.delayed' }, { id: DELAY_ID, delay: timerMs(context.plan.delaySec) });
    }),
    disarmDelay: enqueueActions(({ context, enqueue }) => {
      if (context.plan.delaySec > 0) enqueue.cancel(DELAY_ID);
    }),
  },
  guards: {
    beginsAtOnce: ({ context }) => context.record.status === RunStatus.Running,
    noDelay: ({ context }) => context.plan.delaySec <= 0,
    // Evaluated after every event of a run: they read the schedule's counters, never scan the nodes.
    allSettled: ({ context }) => allStepsSettled(context.schedule),
    hasStepsToStart: ({ context }) => hasStepsToStart(context.schedule, context.plan.maxActiveSteps),
    noneRunning: ({ context }) => context.schedule.running === 0,
    endsAborted: ({ context }) => context.outcome === RunStatus.Aborted,
    endsFailed: ({ context }) => context.outcome === RunStatus.Failed,
    endsPartially: ({ context }) => context.outcome === RunStatus.PartiallySucceeded,
    isStep: ({ event }) => event.type === 'step.finished' && event.handler === undefined,
    noInitHandler: ({ context }) => context.plan.handlers.init === undefined,
    noOutcomeHandler: ({ context }) => outcomeHandler(context) === undefined,
    noExitHandler: ({ context }) => context.plan.handlers.exit === undefined,
    noSharedContainer: ({ context }) => context.plan.services?.container === undefined,
  },
});

/** The run as the parent of the sub DAG runs its steps and handlers start. */
function callParent(plan: RunPlan) {
  return { name: plan.name, dagRunId: plan.dagRunId, root: plan.root, callers: plan.callers, specText: plan.specText, ...(plan.trace ? { traceExport: plan.trace.export } : {}) };
}

/** The step actor's input for a traced run: each execution is a span in the run's trace. */
function traced(plan: RunPlan): { traceId?: string } {
  return plan.trace ? { traceId: plan.trace.traceId } : {};
}

/** What starting a handler takes: its node, its log line and its actor's input; none without such a handler. */
function handlerLaunch(context: RunContext, which: HandlerKind | 'outcome', at: number) {
  const kind = which === 'outcome' ? outcomeHandler(context) : which;
  const step = kind ? context.plan.handlers[kind] : undefined;
  if (!kind || !step) return undefined;
  const { record, line } = startHandler(context, kind, at);
  const status = kind === 'init' ? 'running' : runStatusLabel(context.outcome ?? RunStatus.Running);
  const input: StepInput = {
    index: -1, handler: kind, preconditions: step.preconditions, positional: context.plan.positional, timeoutSec: step.timeoutSec, retryPolicy: step.retryPolicy,
    repeatPolicy: step.repeatPolicy,
    ...(hasConditions(step) ? { stepResults: stepResults(context.plan, record.nodes) } : {}),
    ...(step.call ? { call: { ...step.call, step: HANDLER_NODE_NAMES[kind], parent: callParent(context.plan) } } : {}),
    ...(needsCommands(step)
      ? { pending: { plan: context.plan, index: -1, outputs: context.outputs, nodes: record.nodes, handler: { kind, status } } }
      : { task: handlerTask(context.plan, kind, context.outputs, record.nodes, status) }),
    signalOnStop: step.signalOnStop, cleanupMs: context.plan.maxCleanUpTimeSec * 1000, ...traced(context.plan),
  };
  return { id: `handler-${kind}`, record, line, input };
}

/** The action that starts the init, outcome or exit handler, when the definition has one. */
function launchHandler(which: HandlerKind | 'outcome') {
  return effects.createAction(enqueueActions(({ context, event, enqueue }) => {
    const launch = handlerLaunch(context, which, eventTime(event, context));
    if (!launch) return;
    enqueue.assign({ record: launch.record });
    enqueue({ type: 'persist', params: { record: launch.record, changed: [] } });
    enqueue({ type: 'appendLog', params: { path: launch.record.log, line: launch.line } });
    enqueue.spawnChild('step', { id: launch.id, input: launch.input });
  }));
}

export const runMachine = effects.extend({
  actions: {
    logRunStarted: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      for (const line of runStartedLines(context.record, context.plan, eventTime(event, context))) enqueue({ type: 'appendLog', params: { path: context.record.log, line } });
    })),
    // The step is recorded as started (its write queued) before its actor is spawned and dispatches it.
    startReadySteps: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      const { record, started, changed, lines } = startSteps(context, eventTime(event, context));
      if (record === context.record) return;
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record, changed } });
      for (const line of lines) enqueue({ type: 'appendLog', params: { path: record.log, line } });
      for (const index of started) {
        enqueue.spawnChild('step', {
          id: `step-${index}`,
          input: {
            index,
            ...(context.plan.steps[index].call ? {
              call: {
                ...context.plan.steps[index].call!,
                step: context.plan.steps[index].name,
                parent: callParent(context.plan),
              },
            } : {}),
            preconditions: context.plan.steps[index].preconditions,
            positional: context.plan.positional,
            timeoutSec: context.plan.steps[index].timeoutSec,
            retryPolicy: context.plan.steps[index].retryPolicy,
            retries: record.nodes[index].retryCount,
            repeatPolicy: context.plan.steps[index].repeatPolicy,
            ...(hasConditions(context.plan.steps[index]) ? { stepResults: stepResults(context.plan, record.nodes) } : {}),
            ...(needsCommands(context.plan.steps[index])
              ? { pending: { plan: context.plan, index, outputs: context.outputs, nodes: record.nodes } }
              : { task: stepTask(context.plan, index, context.outputs, record.nodes) }),
            signalOnStop: context.plan.steps[index].signalOnStop,
            cleanupMs: context.plan.maxCleanUpTimeSec * 1000,
            ...traced(context.plan),
          },
        });
      }
    })),
    // A lifecycle handler runs as a step actor of its own, with DAG_RUN_STATUS set to the run's status label.
    startInitHandler: launchHandler('init'),
    startOutcomeHandler: launchHandler('outcome'),
    startExitHandler: launchHandler('exit'),
    recordHandlerResult: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'step.finished' || event.handler === undefined) return;
      const { record, failed, line } = finishHandler(context, event.handler, event.result, event.at);
      const span = eventSpan(context.plan, context.record, event, record);
      if (span) enqueue({ type: 'traceSpan', params: { trace: context.plan.trace!, span } });
      enqueue.assign({ record });
      if (event.handler === 'init' && failed) enqueue.assign({ initFailed: true, outcome: RunStatus.Aborted });
      // A handler that fails after the steps fails the run, unless the run was aborted.
      else if (failed && context.outcome !== undefined && context.outcome !== RunStatus.Aborted) enqueue.assign({ outcome: RunStatus.Failed });
      enqueue({ type: 'persist', params: { record, changed: [] } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
    })),
    recordUnmet: effects.createAction(enqueueActions(({ context, enqueue }) => {
      const at = Date.parse(context.record.startedAt);
      const fields = { dag: context.record.name, 'run-id': context.record.dagRunId, 'attempt-id': context.record.attemptId };
      enqueue.assign({ initFailed: true, outcome: RunStatus.Aborted, record: { ...context.record, error: context.unmet } });
      for (const line of runStartedLines(context.record, context.plan, at)) enqueue({ type: 'appendLog', params: { path: context.record.log, line } });
      enqueue({ type: 'appendLog', params: { path: context.record.log, line: logLine(at, 'ERROR', 'Precondition not met', { ...fields, error: context.unmet! }) } });
    })),
    decideOutcome: effects.createAction(enqueueActions(({ context, enqueue }) => {
      if (!context.initFailed) enqueue.assign({ outcome: runOutcome(context) });
    })),
    recordSubRun: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'step.subRun') return;
      const record = addSubRun(context, event);
      if (record === context.record) return;
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record, changed: event.handler ? [] : [event.index] } });
    })),
    recordRerun: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'step.rerun') return;
      const { record, line } = rerunStep(context, event);
      const span = eventSpan(context.plan, context.record, event);
      if (span) enqueue({ type: 'traceSpan', params: { trace: context.plan.trace!, span } });
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record, changed: event.handler ? [] : [event.index] } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
    })),
    recordStepResult: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'step.finished') return;
      const { record, outputs, line } = finishStep(context, event);
      const span = eventSpan(context.plan, context.record, event, record);
      if (span) enqueue({ type: 'traceSpan', params: { trace: context.plan.trace!, span } });
      enqueue.assign({ record, outputs });
      enqueue({ type: 'persist', params: { record, changed: [event.index] } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
      if (context.plan.steps[event.index].mailOnError && record.nodes[event.index].status === NodeStatus.Failed) {
        enqueue({ type: 'mailStepError', params: { plan: context.plan, record, index: event.index } });
      }
      // A finished step actor would stay among the run's children, and XState copies that map on
      // every spawn and stop: a run of 10,000 steps spent seconds there, most of them at its end.
      enqueue.stopChild(`step-${event.index}`);
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
      if (context.record.handlers?.onInit?.status === NodeStatus.Running) enqueue.sendTo('handler-init', { type: 'step.stop', at });
    })),
    recordRunEnd: effects.createAction(enqueueActions(({ context, event, enqueue }) => {
      const status = context.outcome ?? runOutcome(context);
      const { record, line } = endRun(context, status, eventTime(event, context));
      enqueue.assign({ record });
      enqueue({ type: 'persist', params: { record, changed: [] } });
      enqueue({ type: 'appendLog', params: { path: record.log, line } });
      if (context.plan.trace) enqueue({ type: 'traceSpan', params: { trace: context.plan.trace, span: runSpan(context.plan, record, context.timedOut) } });
      enqueue({ type: 'finished', params: { type: 'run.finished', name: record.name, dagRunId: record.dagRunId, status, log: record.log } });
      if (context.plan.mail) enqueue({ type: 'mailRunEnd', params: { plan: context.plan, record } });
    })),
  },
}).createMachine({
  id: 'dagRun',
  initial: 'queued',
  context: ({ input }) => ({
    ...input, outputs: { ...input.record.outputVars }, stopRequested: false, timedOut: false, delayed: false, initFailed: false,
    schedule: newSchedule(input.plan.steps, input.record.nodes),
  }),
  on: {
    'step.finished': { guard: 'isStep', actions: 'recordStepResult' },
    'step.rerun': { actions: 'recordRerun' },
    'step.subRun': { actions: 'recordSubRun' },
  },
  states: {
    queued: {
      always: [
        { guard: ({ context }) => context.unmet !== undefined, target: 'settled', actions: 'recordUnmet' },
        { guard: 'beginsAtOnce', target: 'active' },
      ],
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
      entry: ['logRunStarted', 'armDagTimeout'],
      exit: 'disarmDagTimeout',
      initial: 'preparing',
      on: { 'run.stop': 'stopping', 'run.timeout': { target: 'stopping', actions: 'markTimedOut' } },
      states: {
        // The DAG-level container starts before any step or handler runs in it; when it cannot, none runs.
        // (An invoke in the state that chooses would create an actor for every run, then stop it.)
        preparing: {
          always: [{ guard: 'noSharedContainer', target: 'initializing' }, { target: 'startingContainer' }],
        },
        startingContainer: {
          invoke: {
            src: 'prepareServices',
            input: ({ context }) => context.plan,
            onDone: [
              {
                guard: ({ event }) => event.output.error !== undefined,
                target: '#dagRun.settled',
                actions: enqueueActions(({ context, event, enqueue }) => {
                  const error = `container: ${event.output.error}`;
                  const fields = { dag: context.record.name, 'run-id': context.record.dagRunId, error };
                  enqueue.assign({ initFailed: true, outcome: RunStatus.Failed, record: { ...context.record, error } });
                  enqueue({ type: 'appendLog', params: { path: context.record.log, line: logLine(event.output.at, 'ERROR', 'The DAG\'s container did not start', fields) } });
                }),
              },
              { target: 'initializing' },
            ],
          },
        },
        // The init handler runs before the steps; when it fails they do not run (aborted).
        initializing: {
          entry: 'startInitHandler',
          always: { guard: 'noInitHandler', target: 'delaying' },
          on: {
            'step.finished': [
              {
                guard: ({ context, event }) => handlerDone('init')({ context, event }) && event.type === 'step.finished' && failed(event.result),
                target: '#dagRun.settled',
                actions: 'recordHandlerResult',
              },
              { guard: handlerDone('init'), target: 'delaying', actions: 'recordHandlerResult' },
            ],
          },
        },
        delaying: {
          entry: 'armDelay',
          exit: 'disarmDelay',
          always: { guard: 'noDelay', target: 'running' },
          on: { 'run.delayed': { target: 'running', actions: enqueueActions(({ enqueue }) => enqueue.assign({ delayed: true })) } },
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
      entry: 'decideOutcome',
      always: 'handling',
    },
    // The handler for the outcome (success, failure or abort), then the exit handler, always last.
    handling: {
      initial: 'outcome',
      on: {
        'run.stop': {
          actions: enqueueActions(({ context, enqueue }) => {
            for (const [kind, name] of Object.entries(HANDLER_NODE_NAMES)) {
              if (kind !== 'init' && context.record.handlers?.[name]?.status === NodeStatus.Running) enqueue.sendTo(`handler-${kind}`, { type: 'step.stop' });
            }
          }),
        },
      },
      states: {
        outcome: {
          entry: 'startOutcomeHandler',
          always: { guard: 'noOutcomeHandler', target: 'exit' },
          on: { 'step.finished': { guard: handlerDone('outcome'), target: 'exit', actions: 'recordHandlerResult' } },
        },
        exit: {
          entry: 'startExitHandler',
          always: { guard: 'noExitHandler', target: '#dagRun.releasing' },
          on: { 'step.finished': { guard: handlerDone('exit'), target: '#dagRun.releasing', actions: 'recordHandlerResult' } },
        },
      },
    },
    // The DAG-level container goes after the last handler, unless the definition keeps it.
    releasing: {
      always: [{ guard: 'noSharedContainer', target: 'ended' }, { target: 'removingContainer' }],
    },
    removingContainer: {
      invoke: {
        src: 'releaseServices',
        input: ({ context }) => context.plan,
        onDone: {
          target: 'ended',
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (event.output.error === undefined) return;
            const fields = { dag: context.record.name, 'run-id': context.record.dagRunId, error: event.output.error };
            enqueue({ type: 'appendLog', params: { path: context.record.log, line: logLine(event.output.at, 'ERROR', 'The DAG\'s container was not removed', fields) } });
          }),
        },
      },
    },
    ended: {
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

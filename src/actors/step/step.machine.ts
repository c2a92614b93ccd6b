// A step actor: runs its task through the executor actor, again for each retry and repeat, stops it
// at its timeout, and reports its executions to its run. Decisions live in policies.ts; waits are
// XState delays, so the actor system's clock drives them.
import { assign, enqueueActions, fromCallback, sendParent, sendTo, setup } from 'xstate';
import { newSpanId, traceparentText, type Condition, type HandlerKind, type RepeatPolicy, type RetryPolicy, type StepResult, type StepTask } from '../../core/index.ts';
import type { PendingTask, StepResultRef } from '../run/plan.ts';
import type { SubDagCall } from './sub-dag.ts';
import { shouldRepeat, shouldRetry, waitMs } from './policies.ts';

export interface StepInput {
  index: number;
  call?: SubDagCall;
  /** Set for a lifecycle handler's actor: its events name it. */
  handler?: HandlerKind;
  /** Checked before the first execution; one that does not hold skips the step. */
  preconditions: Condition[];
  /** The run's positional params ("1", "2"...): conditions see them as commands do, though they are not exported. */
  positional?: Record<string, string>;
  /** The task; absent while the step's env has backtick commands to run first (`pending`). */
  task?: StepTask;
  pending?: PendingTask;
  signalOnStop: string;
  cleanupMs: number;
  timeoutSec?: number;
  retryPolicy?: RetryPolicy;
  repeatPolicy?: RepeatPolicy;
  /** Retries done before this actor: those of an attempt a crash interrupted. */
  retries?: number;
  /** The run's steps with ids, as they stood when this one started: its conditions read them (`${id.exitCode}`). */
  stepResults?: Readonly<Record<string, StepResultRef>>;
  /** The run's trace, when it is traced: each execution is a span of its own. */
  traceId?: string;
}

/** One execution of a traced step: its span, and when it began. */
export interface StepAttempt {
  spanId: string;
  startedAt: number;
}

export interface StepContext extends StepInput {
  retries: number;
  executions: number;
  timedOut: boolean;
  stopped: boolean;
  /** The last execution's result, reported when the step ends. */
  last?: StepResult;
  /** The execution under way, when the run is traced. */
  attempt?: StepAttempt;
}

export type StepEvent =
  /** `at`: when the stop was asked for, for the record of a step stopped between executions. */
  | { type: 'step.stop'; at?: number }
  /** The step's timeoutSec has passed (a delayed event the step raises itself). */
  | { type: 'step.timeout' }
  /** The executor started a sub DAG run. */
  | { type: 'step.subRun'; dagName: string; dagRunId: string; params: string }
  | { type: 'step.exited'; result: StepResult; at: number; repeatConditionHolds?: boolean };

export interface StepFinishedEvent {
  type: 'step.finished';
  index: number;
  handler?: HandlerKind;
  result: StepResult;
  at: number;
  /** The execution that ended, when the run is traced (none for a stop between executions). */
  attempt?: StepAttempt;
}

/** A sub DAG run a step started, for its node's subRuns. */
export interface StepSubRunEvent {
  type: 'step.subRun';
  index: number;
  handler?: HandlerKind;
  dagName: string;
  dagRunId: string;
  params: string;
}

/** An execution that will be followed by another: a retry (after a failure) or a repeat. */
export interface StepRerunEvent {
  type: 'step.rerun';
  index: number;
  handler?: HandlerKind;
  kind: 'retry' | 'repeat';
  /** Retries started so far, or executions done so far. */
  count: number;
  result: StepResult;
  at: number;
  attempt?: StepAttempt;
}

export interface ExecutorInput {
  /** The parent run and the sub DAG this step calls, when it calls one. */
  call?: SubDagCall;
  preconditions: Condition[];
  positional?: Record<string, string>;
  task?: StepTask;
  pending?: PendingTask;
  signalOnStop: string;
  cleanupMs: number;
  /** Evaluated after the execution for repeatPolicy (`while`/`until`). */
  repeatCondition?: Pick<Condition, 'condition' | 'expected'>;
  stepResults?: Readonly<Record<string, StepResultRef>>;
  /** The W3C traceparent of this execution's span, when the run is traced: the step's TRACEPARENT. */
  traceParent?: string;
}

/** Replaced by the engine with one that dispatches to the worker pool. */
export const executeStepPlaceholder = fromCallback<{ type: 'step.stop' }, ExecutorInput>(() => {
  throw new Error('executeStep must be provided by the engine');
});

/** Node's largest timer. */
const MAX_TIMER_MS = 2_147_483_647;
const TIMEOUT_ID = 'stepTimeout';

/** The result reported for an execution the step's timeout stopped. */
function timedOutResult(context: StepContext, result: StepResult): StepResult {
  if (!context.timedOut) return result;
  const exitCode = result.kind === 'ok' ? result.exitCode : 124;
  return { kind: 'ok', exitCode, error: `step timed out after ${context.timeoutSec}s`, timedOut: true };
}

export const stepMachine = setup({
  types: {
    context: {} as StepContext,
    events: {} as StepEvent,
    input: {} as StepInput,
  },
  actors: { executeStep: executeStepPlaceholder },
  delays: {
    retryWait: ({ context }) => (context.retryPolicy ? waitMs(context.retryPolicy, context.retries - 1) : 0),
    repeatWait: ({ context }) => (context.repeatPolicy ? waitMs(context.repeatPolicy, context.executions - 1) : 0),
  },
  actions: {
    // The timeout is a delayed event raised only when the step has one: an `after` transition
    // would set (and clear) a timer on every execution, timeout or not.
    armTimeout: enqueueActions(({ context, enqueue }) => {
      if ((context.timeoutSec ?? 0) > 0) enqueue.raise({ type: 'step.timeout' }, { id: TIMEOUT_ID, delay: Math.min(context.timeoutSec! * 1000, MAX_TIMER_MS) });
    }),
    // A traced run's execution gets its span's id as it begins (its command sees it in TRACEPARENT).
    beginAttempt: enqueueActions(({ context, enqueue }) => {
      if (context.traceId !== undefined) enqueue.assign({ attempt: { spanId: newSpanId(), startedAt: Date.now() } });
    }),
    disarmTimeout: enqueueActions(({ context, enqueue }) => {
      if ((context.timeoutSec ?? 0) > 0) enqueue.cancel(TIMEOUT_ID);
    }),
    // A stop between executions: the step ends with the stop.
    reportStopped: sendParent(({ context, event }): StepFinishedEvent => ({
      type: 'step.finished', index: context.index, at: (event.type === 'step.stop' ? event.at : undefined) ?? Date.now(),
      ...(context.handler ? { handler: context.handler } : {}),
      result: { kind: 'error', code: 'stopped', message: 'stopped between executions' },
    })),
  },
  guards: {
    retries: ({ context, event }) => event.type === 'step.exited' && !context.stopped &&
      shouldRetry(context.retryPolicy, timedOutResult(context, event.result), context.retries),
    repeats: ({ context, event }) => event.type === 'step.exited' && !context.stopped && !context.timedOut &&
      shouldRepeat(context.repeatPolicy, event.result, context.executions + 1, event.repeatConditionHolds),
  },
}).createMachine({
  id: 'step',
  initial: 'running',
  context: ({ input }) => ({ ...input, retries: input.retries ?? 0, executions: 0, timedOut: false, stopped: false }),
  states: {
    running: {
      entry: [assign({ timedOut: false }), 'armTimeout', 'beginAttempt'],
      exit: 'disarmTimeout',
      invoke: {
        id: 'executor',
        src: 'executeStep',
        input: ({ context }) => ({
          // Preconditions decide once, before the first execution.
          preconditions: context.retries === 0 && context.executions === 0 ? context.preconditions : [],
          // Each execution of a repeated call has children of its own; a retry finds the same ones.
          ...(context.call ? { call: { ...context.call, execution: context.executions } } : {}),
          positional: context.positional, task: context.task, pending: context.pending, signalOnStop: context.signalOnStop, cleanupMs: context.cleanupMs,
          ...(context.stepResults ? { stepResults: context.stepResults } : {}),
          ...(context.attempt ? { traceParent: traceparentText({ traceId: context.traceId!, spanId: context.attempt.spanId, sampled: true }) } : {}),
          ...(context.repeatPolicy?.condition !== undefined
            ? { repeatCondition: { condition: context.repeatPolicy.condition, expected: context.repeatPolicy.expected } }
            : {}),
        }),
      },
      on: {
        'step.timeout': { actions: [assign({ timedOut: true }), sendTo('executor', { type: 'step.stop' })] },
        'step.stop': { actions: [assign({ stopped: true }), sendTo('executor', { type: 'step.stop' })] },
        'step.subRun': {
          actions: sendParent(({ context, event }): StepSubRunEvent => ({
            type: 'step.subRun', index: context.index, dagName: event.dagName, dagRunId: event.dagRunId, params: event.params,
            ...(context.handler ? { handler: context.handler } : {}),
          })),
        },
        'step.exited': [
          {
            guard: 'retries',
            target: 'waiting',
            actions: enqueueActions(({ context, event, enqueue }) => {
              enqueue.assign({ retries: context.retries + 1, last: event.result });
              enqueue(sendParent({
                type: 'step.rerun', index: context.index, kind: 'retry', count: context.retries + 1,
                result: timedOutResult(context, event.result), at: event.at, ...(context.handler ? { handler: context.handler } : {}),
                ...(context.attempt ? { attempt: context.attempt } : {}),
              } satisfies StepRerunEvent));
            }),
          },
          {
            guard: 'repeats',
            target: 'pausing',
            actions: enqueueActions(({ context, event, enqueue }) => {
              enqueue.assign({ executions: context.executions + 1, last: event.result });
              enqueue(sendParent({
                type: 'step.rerun', index: context.index, kind: 'repeat', count: context.executions + 1, result: event.result, at: event.at,
                ...(context.handler ? { handler: context.handler } : {}), ...(context.attempt ? { attempt: context.attempt } : {}),
              } satisfies StepRerunEvent));
            }),
          },
          {
            target: 'done',
            actions: sendParent(({ context, event }): StepFinishedEvent => ({
              type: 'step.finished', index: context.index, result: timedOutResult(context, event.result), at: event.at,
              ...(context.handler ? { handler: context.handler } : {}), ...(context.attempt ? { attempt: context.attempt } : {}),
            })),
          },
        ],
      },
    },
    // Between a failure and its retry.
    waiting: {
      after: { retryWait: 'running' },
      on: { 'step.stop': { target: 'done', actions: 'reportStopped' } },
    },
    // Between two executions of a repeat.
    pausing: {
      after: { repeatWait: 'running' },
      on: { 'step.stop': { target: 'done', actions: 'reportStopped' } },
    },
    done: { type: 'final' },
  },
});

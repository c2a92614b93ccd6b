// A step actor: runs its task through the executor actor and reports the result to its run.
// Retries, repeats and timeouts (a later capability) belong here.
import { fromCallback, sendParent, sendTo, setup } from 'xstate';
import type { Condition, StepResult, StepTask } from '../../core/index.ts';
import type { PendingTask } from '../run/plan.ts';

export interface StepInput {
  index: number;
  /** Checked before the process starts; one that does not hold skips the step. */
  preconditions: Condition[];
  /** The task; absent while the step's env has backtick commands to run first (`pending`). */
  task?: StepTask;
  pending?: PendingTask;
  signalOnStop: string;
  cleanupMs: number;
}

export type StepEvent =
  | { type: 'step.stop' }
  | { type: 'step.exited'; result: StepResult; at: number };

export interface StepFinishedEvent {
  type: 'step.finished';
  index: number;
  result: StepResult;
  at: number;
}

export interface ExecutorInput {
  preconditions: Condition[];
  task?: StepTask;
  pending?: PendingTask;
  signalOnStop: string;
  cleanupMs: number;
}

/** Replaced by the engine with one that dispatches to the worker pool. */
export const executeStepPlaceholder = fromCallback<{ type: 'step.stop' }, ExecutorInput>(() => {
  throw new Error('executeStep must be provided by the engine');
});

export const stepMachine = setup({
  types: {
    context: {} as StepInput,
    events: {} as StepEvent,
    input: {} as StepInput,
  },
  actors: { executeStep: executeStepPlaceholder },
}).createMachine({
  id: 'step',
  initial: 'running',
  context: ({ input }) => input,
  states: {
    running: {
      invoke: {
        id: 'executor',
        src: 'executeStep',
        input: ({ context }) => ({
          preconditions: context.preconditions, task: context.task, pending: context.pending,
          signalOnStop: context.signalOnStop, cleanupMs: context.cleanupMs,
        }),
      },
      on: {
        'step.stop': { actions: sendTo('executor', { type: 'step.stop' }) },
        'step.exited': {
          target: 'done',
          actions: sendParent(({ context, event }): StepFinishedEvent => ({
            type: 'step.finished', index: context.index, result: event.result, at: event.at,
          })),
        },
      },
    },
    done: { type: 'final' },
  },
});

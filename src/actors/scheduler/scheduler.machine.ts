// The scheduler actor: parent of every run actor; knows which runs are active per DAG name.
// Cron timers and queues (later capabilities) join it here.
import { assign, enqueueActions, setup } from 'xstate';
import { runMachine, type RunFinishedEvent, type RunInput } from '../run/run.machine.ts';

export interface SchedulerContext {
  /** DAG name -> ids of its active runs. */
  active: Record<string, string[]>;
}

export type SchedulerEvent =
  | { type: 'run.admit'; input: RunInput }
  | { type: 'run.stop'; name: string; dagRunId: string; at: number }
  | RunFinishedEvent;

export function runActorId(name: string, dagRunId: string): string {
  return `run:${name}:${dagRunId}`;
}

export const schedulerMachine = setup({
  types: { context: {} as SchedulerContext, events: {} as SchedulerEvent },
  actors: { run: runMachine },
  actions: {
    // Provided by the engine: tells waiters that a run reached its final state.
    announceFinished: (_, _params: { name: string; dagRunId: string; log: string }) => {},
  },
}).createMachine({
  id: 'scheduler',
  context: { active: {} },
  on: {
    'run.admit': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { name, dagRunId } = event.input.record;
        enqueue.assign({ active: { ...context.active, [name]: [...(context.active[name] ?? []), dagRunId] } });
        enqueue.spawnChild('run', { id: runActorId(name, dagRunId), input: event.input });
      }),
    },
    'run.stop': {
      actions: enqueueActions(({ event, enqueue }) => {
        enqueue.sendTo(runActorId(event.name, event.dagRunId), { type: 'run.stop', at: event.at });
      }),
    },
    'run.finished': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const remaining = (context.active[event.name] ?? []).filter((id) => id !== event.dagRunId);
        const active = { ...context.active };
        if (remaining.length > 0) active[event.name] = remaining;
        else delete active[event.name];
        enqueue(assign({ active }));
        enqueue.stopChild(runActorId(event.name, event.dagRunId));
        enqueue({ type: 'announceFinished', params: { name: event.name, dagRunId: event.dagRunId, log: event.log } });
      }),
    },
  },
});

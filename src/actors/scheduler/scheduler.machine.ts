// The scheduler actor: parent of every run actor; knows which runs are active per DAG name and how
// many more are admitted but still starting. Cron timers and queues (later capabilities) join it.
import { assign, enqueueActions, setup } from 'xstate';
import { runMachine, type RunFinishedEvent, type RunInput } from '../run/run.machine.ts';

// Maps, not objects: DAG names come from requests, and a name such as `constructor` or `__proto__`
// must not meet Object.prototype. The scheduler's context is rebuilt at start, never persisted.
export interface SchedulerContext {
  /** DAG name -> ids of its active runs. */
  active: ReadonlyMap<string, readonly string[]>;
  /** DAG name -> runs admitted by a start that have no actor yet (their definition is still being prepared). */
  reserved: ReadonlyMap<string, number>;
}

export type SchedulerEvent =
  /** A start was admitted: its run counts against maxActiveRuns from now on. */
  | { type: 'run.reserve'; name: string }
  /** An admitted start gave up before its run began. */
  | { type: 'run.release'; name: string }
  /** A run begins; `reserved` hands over the slot its start reserved, in the same step. */
  | { type: 'run.admit'; input: RunInput; reserved?: boolean }
  | { type: 'run.stop'; name: string; dagRunId: string; at: number }
  | RunFinishedEvent;

export function runActorId(name: string, dagRunId: string): string {
  return `run:${name}:${dagRunId}`;
}

/** Runs of a DAG name that count against its maxActiveRuns: active, or admitted and starting. */
export function admittedCount(context: SchedulerContext, name: string): number {
  return (context.active.get(name)?.length ?? 0) + (context.reserved.get(name) ?? 0);
}

function withCount(counts: ReadonlyMap<string, number>, name: string, delta: number): Map<string, number> {
  const next = new Map(counts);
  const count = (next.get(name) ?? 0) + delta;
  if (count > 0) next.set(name, count);
  else next.delete(name);
  return next;
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
  context: { active: new Map(), reserved: new Map() },
  on: {
    'run.reserve': { actions: assign({ reserved: ({ context, event }) => withCount(context.reserved, event.name, 1) }) },
    'run.release': { actions: assign({ reserved: ({ context, event }) => withCount(context.reserved, event.name, -1) }) },
    'run.admit': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { name, dagRunId } = event.input.record;
        const active = new Map(context.active).set(name, [...(context.active.get(name) ?? []), dagRunId]);
        enqueue.assign({ active, ...(event.reserved ? { reserved: withCount(context.reserved, name, -1) } : {}) });
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
        const remaining = (context.active.get(event.name) ?? []).filter((id) => id !== event.dagRunId);
        const active = new Map(context.active);
        if (remaining.length > 0) active.set(event.name, remaining);
        else active.delete(event.name);
        enqueue(assign({ active }));
        enqueue.stopChild(runActorId(event.name, event.dagRunId));
        enqueue({ type: 'announceFinished', params: { name: event.name, dagRunId: event.dagRunId, log: event.log } });
      }),
    },
  },
});

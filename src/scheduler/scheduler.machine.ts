// The scheduler actor: parent of every run actor, and the one place where admission and dispatch
// are decided. It knows which runs are active per DAG name, how many more are admitted but still
// starting, which runs wait in which queue, and each queue's limit. Every event that can free or
// fill a slot (a run finished, a run was enqueued, a limit changed, a DAG was resumed) dispatches
// the queued runs that may start: there is no polling loop.
import { enqueueActions, setup } from 'xstate';
import { runMachine, type RunFinishedEvent, type RunInput } from '../actors/index.ts';
import type { QueuedRun } from './queue-order.ts';
import { dispatch, joinQueue, leaveQueue, withCount, withQueued, withoutQueued, type Slots } from './slots.ts';

// The scheduler's context is rebuilt at start (queued runs from the store), never persisted.
export type SchedulerContext = Slots;

export interface SchedulerInput {
  queueLimits?: ReadonlyMap<string, number>;
  isSuspended?: (fileName: string) => boolean;
  /** Queued runs wait from the start (a command's engine: the server or scheduler dispatches them). */
  paused?: boolean;
}

export type SchedulerEvent =
  /** A start was admitted: its run counts against maxActiveRuns (and its queue, if any) from now on. */
  | { type: 'run.reserve'; name: string; dagRunId: string; queue?: string }
  /** An admitted start, or a dispatched queued run, gave up before its run began. */
  | { type: 'run.release'; name: string; dagRunId: string }
  /** A run begins; `reserved` hands over the slot its start reserved, in the same step. */
  | { type: 'run.admit'; input: RunInput; reserved?: boolean; queue?: string }
  | { type: 'run.stop'; name: string; dagRunId: string; at: number }
  /** A run waits at the tail of its queue (its record and item are written, or being written). */
  | { type: 'queue.add'; run: QueuedRun }
  /** A queued run leaves its queue without starting (dequeued). */
  | { type: 'queue.remove'; name: string; dagRunId: string }
  /** Custom queues' maxConcurrency, all of them: queues left out are DAG queues from now on. */
  | { type: 'queue.limits'; limits: ReadonlyMap<string, number> }
  /** Something the scheduler cannot see changed (a DAG was resumed): look at the queues again. */
  | { type: 'queue.poke' }
  /** The server shuts down: queued runs stay queued, none is dispatched from now on. */
  | { type: 'queue.pause' }
  | RunFinishedEvent;

export function runActorId(name: string, dagRunId: string): string {
  return `run:${name}:${dagRunId}`;
}

export const schedulerMachine = setup({
  types: { context: {} as SchedulerContext, events: {} as SchedulerEvent, input: {} as SchedulerInput },
  actors: { run: runMachine },
  actions: {
    // Provided by the engine: tells waiters that a run reached its final state.
    announceFinished: (_, _params: { name: string; dagRunId: string; log: string }) => {},
    // Provided by the engine: starts a queued run the scheduler dispatched (it holds a reserved slot).
    startQueued: (_, _params: { run: QueuedRun }) => {},
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input }) => ({
    active: new Map(), reserved: new Map(), queueOf: new Map(), byQueue: new Map(), queued: new Map(),
    queueLimits: input.queueLimits ?? new Map(), isSuspended: input.isSuspended ?? (() => false), paused: input.paused ?? false,
  }),
  on: {
    'run.reserve': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.assign({ reserved: withCount(context.reserved, event.name, 1), ...joinQueue(context, event.name, event.dagRunId, event.queue) });
      }),
    },
    'run.release': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        applyAndDispatch(enqueue, { ...context, reserved: withCount(context.reserved, event.name, -1), ...leaveQueue(context, event.name, event.dagRunId) });
      }),
    },
    'run.admit': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { name, dagRunId } = event.input.record;
        const active = new Map(context.active).set(name, [...(context.active.get(name) ?? []), dagRunId]);
        // A reserved slot already counts against its queue; a run admitted without one joins it now.
        const queue = event.reserved ? {} : joinQueue(context, name, dagRunId, event.queue);
        enqueue.assign({ active, ...queue, ...(event.reserved ? { reserved: withCount(context.reserved, name, -1) } : {}) });
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
        enqueue.stopChild(runActorId(event.name, event.dagRunId));
        enqueue({ type: 'announceFinished', params: { name: event.name, dagRunId: event.dagRunId, log: event.log } });
        applyAndDispatch(enqueue, { ...context, active, ...leaveQueue(context, event.name, event.dagRunId) });
      }),
    },
    'queue.add': {
      actions: enqueueActions(({ context, event, enqueue }) => applyAndDispatch(enqueue, { ...context, ...withQueued(context, event.run) })),
    },
    'queue.remove': {
      actions: enqueueActions(({ context, event, enqueue }) => applyAndDispatch(enqueue, { ...context, ...withoutQueued(context, event.name, event.dagRunId) })),
    },
    'queue.limits': {
      actions: enqueueActions(({ context, event, enqueue }) => applyAndDispatch(enqueue, { ...context, queueLimits: new Map(event.limits) })),
    },
    'queue.pause': { actions: enqueueActions(({ enqueue }) => enqueue.assign({ paused: true })) },
    'queue.poke': {
      actions: enqueueActions(({ context, enqueue }) => applyAndDispatch(enqueue, context)),
    },
  },
});

/** The part of XState's `enqueue` that dispatching uses. */
interface Enqueue {
  assign(values: (() => SchedulerContext) | Partial<Omit<SchedulerContext, 'isSuspended'>>): void;
  (action: { type: 'startQueued'; params: { run: QueuedRun } }): void;
}

/** Takes `next` as the context and starts the queued runs it lets go, in one step. */
function applyAndDispatch(enqueue: Enqueue, next: Slots): void {
  const { slots, start } = dispatch(next);
  // The function form: in the object form XState would call `isSuspended` as a property assigner.
  enqueue.assign(() => slots);
  for (const run of start) enqueue({ type: 'startQueued', params: { run } });
}

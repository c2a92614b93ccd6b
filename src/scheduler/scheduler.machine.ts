// The scheduler actor: the one owner of admission and dispatch. Every way a run can begin asks it
// (admission.ts decides), and the runs it holds are its context alone: which runs are active per
// DAG name, which are admitted and still starting, which wait in which queue, each queue's limit.
// Every event that can free or fill a slot (a run finished, a run was enqueued, a limit changed, a
// DAG was resumed) dispatches the queued runs that may start: there is no polling loop. A run that
// begins is handed to the run dispatcher (where it executes); its end comes back as run.finished.
import { enqueueActions, setup } from 'xstate';
import { AppError, runKey, type WorkerView } from '../core/index.ts';
import type { RunFinishedEvent, RunInput } from '../actors/index.ts';
import { decideAdmission, waitReasonOf, type Admission, type AdmissionAsk } from './admission.ts';
import type { QueuedRun } from './queue-order.ts';
import {
  dispatch, findQueued, holds, isActive, joinQueue, leaveQueue, withQueued, withoutPlace, withoutQueued, withoutSlot,
  type Slot, type Slots,
} from './slots.ts';

// The scheduler's context is rebuilt at start (queued runs from the store), never persisted.
export type SchedulerContext = Slots;

export interface SchedulerInput {
  queueLimits: ReadonlyMap<string, number>;
  isSuspended: (fileName: string) => boolean;
  isStored: (name: string, dagRunId: string) => boolean;
  /** Queued runs wait from the start (a command's engine: the server or scheduler dispatches them). */
  paused: boolean;
  /**
   * Distributed dispatch: the workers as last heard (a queued run with a workerSelector starts
   * when one carrying its labels has room). Absent: every run runs here.
   */
  workers?: () => readonly WorkerView[];
  /** A worker's engine: the labels of its worker. */
  ownLabels?: Readonly<Record<string, string>>;
}

/** Whether a run began: refused when the server shuts down, or its slot was given up meanwhile. */
export type Beginning = { begun: true } | { begun: false; error: AppError };

export type SchedulerEvent =
  /** A run asks to begin: admitted, queued or refused, answered in the same step. */
  | { type: 'admission.ask'; ask: AdmissionAsk; reply: (answer: Admission) => void }
  /**
   * An admitted run begins: its slot becomes the active run, and the run is dispatched. `beginning`
   * runs first, in the same step (its first record is written ahead of anything the run writes).
   */
  | { type: 'run.begin'; slot: Slot; input: RunInput; beginning: () => void; reply: (answer: Beginning) => void }
  /**
   * A run the previous process placed on a worker, which runs it still: active again, placed on
   * its worker and counted as a start is, with nothing dispatched (its worker has it).
   */
  | { type: 'run.adopt'; name: string; dagRunId: string; worker: string; queue: string }
  /** An admitted run, or a dispatched queued run, gave up before it began. */
  | { type: 'run.release'; slot: Slot }
  | { type: 'run.stop'; name: string; dagRunId: string; at: number }
  /** A run waits at the tail of its queue again, as a previous process left it. */
  | { type: 'queue.restore'; run: QueuedRun }
  /** A queued run leaves its queue without starting (dequeued): answered with it, or nothing. */
  | { type: 'queue.remove'; name: string; dagRunId: string; reply: (run: QueuedRun | undefined) => void }
  /** Custom queues' maxConcurrency, all of them: queues left out are DAG queues from now on. */
  | { type: 'queue.limits'; limits: ReadonlyMap<string, number> }
  /** Something the scheduler cannot see changed (a DAG was resumed): look at the queues again. */
  | { type: 'queue.poke' }
  /** The server drains: only sub DAG runs of active runs begin, queued runs stay queued. */
  | { type: 'admission.drain' }
  /** The server closes: no run begins. */
  | { type: 'admission.close' }
  | RunFinishedEvent;

export const schedulerMachine = setup({
  types: { context: {} as SchedulerContext, events: {} as SchedulerEvent, input: {} as SchedulerInput },
  actions: {
    // Provided by the engine: hands a run that begins to the run dispatcher.
    dispatchRun: (_, _params: { input: RunInput; worker?: string }) => {},
    // Provided by the engine: asks the run dispatcher to stop an active run.
    stopRun: (_, _params: { name: string; dagRunId: string; at: number }) => {},
    // Provided by the engine: tells waiters that a run reached its final state.
    announceFinished: (_, _params: { name: string; dagRunId: string; log: string }) => {},
    // Provided by the engine: starts a queued run the scheduler dispatched, with the slot it holds.
    startQueued: (_, _params: { run: QueuedRun; slot: Slot }) => {},
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input }) => ({
    active: new Map(), reserved: new Map(), starting: new Map(), queueOf: new Map(), byQueue: new Map(), queued: new Map(),
    queueLimits: input.queueLimits, isSuspended: input.isSuspended, isStored: input.isStored, paused: input.paused, admitting: 'open',
    placed: new Map(), ...(input.workers ? { workers: input.workers } : {}), ...(input.ownLabels ? { ownLabels: input.ownLabels } : {}),
  }),
  on: {
    'admission.ask': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { answer, next } = decideAdmission(context, event.ask);
        if (answer.outcome === 'queued') {
          const after = applyAndDispatch(enqueue, { ...context, ...next });
          // Still queued, it is the last of its queue: the dispatch takes runs out, never reorders them.
          const tail = after.queued.get(answer.queue)?.at(-1);
          const run = tail?.name === event.ask.name && tail.dagRunId === event.ask.dagRunId ? tail : undefined;
          // Answered with what it waits for; a run dispatched at once waits for nothing.
          if (run) answer.waitingFor = waitReasonOf(after, run);
        } else if (next) {
          enqueue.assign(next);
        }
        enqueue(() => event.reply(answer));
      }),
    },
    'run.begin': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { slot, input } = event;
        const held = holds(context, slot);
        const refusal = !held ? 'its start was given up'
          : context.admitting === 'closed' || (context.admitting === 'draining' && !slot.sub) ? 'the server is shutting down' : undefined;
        if (refusal) {
          if (held) applyAndDispatch(enqueue, release(context, slot));
          enqueue(() => event.reply({ begun: false, error: new AppError('internal_error', refusal) }));
          return;
        }
        const { name, dagRunId } = slot;
        const active = new Map(context.active).set(name, [...(context.active.get(name) ?? []), dagRunId]);
        // A counted slot counts against its queue already; an uncounted one joins it now.
        const queue = slot.counted ? {} : joinQueue(context, name, dagRunId, slot.queue);
        enqueue.assign({ ...withoutSlot(context, slot), active, ...queue });
        enqueue(() => event.reply({ begun: true }));
        enqueue(() => event.beginning());
        enqueue({ type: 'dispatchRun', params: { input, ...(slot.worker ? { worker: slot.worker } : {}) } });
      }),
    },
    'run.adopt': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { name, dagRunId, worker, queue } = event;
        if (isActive(context, name, dagRunId)) return;
        const active = new Map(context.active).set(name, [...(context.active.get(name) ?? []), dagRunId]);
        const placed = new Map(context.placed).set(runKey(name, dagRunId), worker);
        enqueue.assign({ active, placed, ...joinQueue(context, name, dagRunId, queue) });
      }),
    },
    'run.release': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        if (holds(context, event.slot)) applyAndDispatch(enqueue, release(context, event.slot));
      }),
    },
    'run.stop': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        if (isActive(context, event.name, event.dagRunId)) enqueue({ type: 'stopRun', params: { name: event.name, dagRunId: event.dagRunId, at: event.at } });
      }),
    },
    'run.finished': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const remaining = (context.active.get(event.name) ?? []).filter((id) => id !== event.dagRunId);
        const active = new Map(context.active);
        if (remaining.length > 0) active.set(event.name, remaining);
        else active.delete(event.name);
        enqueue({ type: 'announceFinished', params: { name: event.name, dagRunId: event.dagRunId, log: event.log } });
        applyAndDispatch(enqueue, { ...context, active, ...leaveQueue(context, event.name, event.dagRunId), ...withoutPlace(context, event.name, event.dagRunId) });
      }),
    },
    'queue.restore': {
      actions: enqueueActions(({ context, event, enqueue }) => { applyAndDispatch(enqueue, { ...context, ...withQueued(context, event.run) }); }),
    },
    'queue.remove': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const run = findQueued(context, event.name, event.dagRunId);
        if (run) applyAndDispatch(enqueue, { ...context, ...withoutQueued(context, event.name, event.dagRunId) });
        enqueue(() => event.reply(run));
      }),
    },
    'queue.limits': {
      actions: enqueueActions(({ context, event, enqueue }) => { applyAndDispatch(enqueue, { ...context, queueLimits: new Map(event.limits) }); }),
    },
    'queue.poke': {
      actions: enqueueActions(({ context, enqueue }) => { applyAndDispatch(enqueue, context); }),
    },
    'admission.drain': { actions: enqueueActions(({ enqueue }) => enqueue.assign({ paused: true, admitting: 'draining' })) },
    'admission.close': { actions: enqueueActions(({ enqueue }) => enqueue.assign({ paused: true, admitting: 'closed' })) },
  },
});

/** The slot is handed back: it no longer counts, nor against its queue when it counted there, nor on its worker. */
function release(context: Slots, slot: Slot): Slots {
  return {
    ...context, ...withoutSlot(context, slot), ...(slot.counted ? leaveQueue(context, slot.name, slot.dagRunId) : {}),
    ...(slot.worker ? withoutPlace(context, slot.name, slot.dagRunId) : {}),
  };
}

/** The part of XState's `enqueue` that dispatching uses. */
interface Enqueue {
  assign(values: () => SchedulerContext): void;
  (action: { type: 'startQueued'; params: { run: QueuedRun; slot: Slot } }): void;
}

/**
 * Takes `next` as the context and starts the queued runs it lets go, in one step; each gets its
 * slot, counted, as a start's. Returns the context it leaves.
 */
function applyAndDispatch(enqueue: Enqueue, next: Slots): Slots {
  const { slots, start, placements } = dispatch(next);
  let after = slots;
  const handed: Array<{ run: QueuedRun; slot: Slot }> = [];
  if (start.length > 0) {
    const starting = new Map(after.starting);
    for (const run of start) {
      const worker = placements.get(run);
      const slot: Slot = { name: run.name, dagRunId: run.dagRunId, counted: true, queue: run.queue, ...(worker ? { worker } : {}) };
      starting.set(runKey(run.name, run.dagRunId), slot);
      handed.push({ run, slot });
    }
    after = { ...after, starting };
  }
  // The function form: in the object form XState would call `isSuspended` as a property assigner.
  const assigned = after;
  enqueue.assign(() => assigned);
  for (const params of handed) enqueue({ type: 'startQueued', params });
  return assigned;
}

// The scheduler's counts, as pure functions of its context: runs active or starting per DAG name
// and per queue, the queued runs, and which of them start now. The scheduler actor applies them;
// nothing else changes its context.
import { runKey, type WorkerView } from '../core/index.ts';
import { decideDispatch, type DispatchState, type QueuedRun, type WaitReason } from './queue-order.ts';

/**
 * A run admitted and not yet begun (its start evaluates its params and writes its first record
 * meanwhile): held by whoever starts it, handed back as it begins or gives up.
 */
export interface Slot {
  name: string;
  dagRunId: string;
  /** Counted against its DAG's maxActiveRuns, and its queue, from admission on. */
  counted: boolean;
  /** The queue it counts against: from admission when counted, else from its beginning. */
  queue?: string;
  /** A retry under a new id: the run it retries, which nothing else may take meanwhile (a run key). */
  retried?: string;
  /** A sub DAG run of an active run: it begins while the server drains, as its caller may finish in time. */
  sub?: boolean;
  /** The worker it runs on (a run with a workerSelector, under distributed dispatch); absent: here. */
  worker?: string;
}

/** open: runs are admitted; draining: only sub DAG runs of active runs; closed: none begins. */
export type Admitting = 'open' | 'draining' | 'closed';

// Maps, not objects: DAG names and queue names come from requests, and a name such as
// `constructor` or `__proto__` must not meet Object.prototype.
export interface Slots {
  /** DAG name -> ids of its active runs. */
  active: ReadonlyMap<string, readonly string[]>;
  /** DAG name -> runs admitted and counted (a start, or a queued run dispatched) that have not begun. */
  reserved: ReadonlyMap<string, number>;
  /** Run key -> the slot of a run admitted that has not begun, counted or not (a retry's under both its keys). */
  starting: ReadonlyMap<string, Slot>;
  /** Run key -> the queue it counts against, for runs active or starting that have one. */
  queueOf: ReadonlyMap<string, string>;
  /** Queue -> runs active or starting that count against it. */
  byQueue: ReadonlyMap<string, number>;
  /** Queue -> its waiting runs, first in first. */
  queued: ReadonlyMap<string, readonly QueuedRun[]>;
  /** A custom queue's maxConcurrency; any other queue is a DAG's, limited by maxActiveRuns alone. */
  queueLimits: ReadonlyMap<string, number>;
  /** Whether a stored DAG file is suspended. */
  isSuspended: (fileName: string) => boolean;
  /** Whether a run's id is taken in the store: a record, or a queue item whose write has not committed. */
  isStored: (name: string, dagRunId: string) => boolean;
  /** While the server shuts down (or in the command's engine), queued runs stay queued. */
  paused: boolean;
  /** Distributed dispatch: the workers as last heard. Absent when this server runs every run itself. */
  workers?: () => readonly WorkerView[];
  /** Run key -> the worker a run starting or active was placed on. */
  placed: ReadonlyMap<string, string>;
  /** A worker's engine: the labels of the worker it runs in (a sub DAG run's own selector is checked against them). */
  ownLabels?: Readonly<Record<string, string>>;
  admitting: Admitting;
}

export function isActive(slots: Pick<Slots, 'active'>, name: string, dagRunId: string): boolean {
  return slots.active.get(name)?.includes(dagRunId) ?? false;
}

/** The slot admitted as `slot` still holds (not begun, not given up). */
export function holds(slots: Pick<Slots, 'starting'>, slot: Slot): boolean {
  return slots.starting.get(runKey(slot.name, slot.dagRunId)) === slot;
}

/** The run no longer holds a place on a worker (it ended, or gave up before it began). */
export function withoutPlace(slots: Slots, name: string, dagRunId: string): Partial<Slots> {
  const key = runKey(name, dagRunId);
  if (!slots.placed.has(key)) return {};
  const placed = new Map(slots.placed);
  placed.delete(key);
  return { placed };
}

/** The slot leaves `starting`; a counted one stops counting against its name (its run has begun or gave up). */
export function withoutSlot(slots: Slots, slot: Slot): Partial<Slots> {
  const starting = new Map(slots.starting);
  starting.delete(runKey(slot.name, slot.dagRunId));
  if (slot.retried) starting.delete(slot.retried);
  return { starting, ...(slot.counted ? { reserved: withCount(slots.reserved, slot.name, -1) } : {}) };
}

export function withCount(counts: ReadonlyMap<string, number>, key: string, delta: number): Map<string, number> {
  const next = new Map(counts);
  const count = (next.get(key) ?? 0) + delta;
  if (count > 0) next.set(key, count);
  else next.delete(key);
  return next;
}

/** Runs of a DAG name that count against its maxActiveRuns: active, or admitted and starting. */
export function admittedCount(slots: Pick<Slots, 'active' | 'reserved'>, name: string): number {
  return (slots.active.get(name)?.length ?? 0) + (slots.reserved.get(name) ?? 0);
}

/** Runs of a DAG name waiting in any queue. */
export function queuedCount(slots: Pick<Slots, 'queued'>, name: string): number {
  let count = 0;
  for (const items of slots.queued.values()) for (const item of items) if (item.name === name) count++;
  return count;
}

export function findQueued(slots: Pick<Slots, 'queued'>, name: string, dagRunId: string): QueuedRun | undefined {
  for (const items of slots.queued.values()) {
    const found = items.find((item) => item.name === name && item.dagRunId === dagRunId);
    if (found) return found;
  }
  return undefined;
}

/** The run counts against `queue` (when it has one) from now on. */
export function joinQueue(slots: Slots, name: string, dagRunId: string, queue: string | undefined): Partial<Slots> {
  if (queue === undefined) return {};
  return { queueOf: new Map(slots.queueOf).set(runKey(name, dagRunId), queue), byQueue: withCount(slots.byQueue, queue, 1) };
}

/** The run no longer counts against the queue it counted against, if any. */
export function leaveQueue(slots: Slots, name: string, dagRunId: string): Partial<Slots> {
  const key = runKey(name, dagRunId);
  const queue = slots.queueOf.get(key);
  if (queue === undefined) return {};
  const queueOf = new Map(slots.queueOf);
  queueOf.delete(key);
  return { queueOf, byQueue: withCount(slots.byQueue, queue, -1) };
}

export function withQueued(slots: Slots, run: QueuedRun): Partial<Slots> {
  return { queued: new Map(slots.queued).set(run.queue, [...(slots.queued.get(run.queue) ?? []), run]) };
}

export function withoutQueued(slots: Slots, name: string, dagRunId: string): Partial<Slots> {
  const found = findQueued(slots, name, dagRunId);
  if (!found) return {};
  const queued = new Map(slots.queued);
  const rest = slots.queued.get(found.queue)!.filter((item) => item !== found);
  if (rest.length > 0) queued.set(found.queue, rest);
  else queued.delete(found.queue);
  return { queued };
}

function runningByName(slots: Slots): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [name, ids] of slots.active) counts.set(name, ids.length);
  for (const [name, count] of slots.reserved) counts.set(name, (counts.get(name) ?? 0) + count);
  return counts;
}

function dispatchState(slots: Slots): DispatchState {
  return {
    queued: slots.queued, runningByQueue: slots.byQueue, runningByName: runningByName(slots),
    queueLimits: slots.queueLimits, isSuspended: slots.isSuspended,
    ...(slots.workers ? { workers: { list: slots.workers(), placed: placedPerWorker(slots.placed) } } : {}),
  };
}

/** Runs placed on each worker (starting or active). */
export function placedPerWorker(placed: ReadonlyMap<string, string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const worker of placed.values()) counts.set(worker, (counts.get(worker) ?? 0) + 1);
  return counts;
}

/** Whether a run enqueued to `queue` now would wait for a slot of it (a custom queue, full or with runs waiting). */
export function customQueueBusy(slots: Slots, queue: string): boolean {
  const limit = slots.queueLimits.get(queue);
  return limit !== undefined && ((slots.byQueue.get(queue) ?? 0) >= limit || slots.queued.has(queue));
}

/**
 * The queued runs that start now, taken out of their queues and counted as starting (reserved
 * for their DAG, counted against their queue, placed on their worker), so that no later decision
 * counts them twice.
 */
export function dispatch(slots: Slots): { slots: Slots; start: QueuedRun[]; placements: ReadonlyMap<QueuedRun, string> } {
  if (slots.queued.size === 0 || slots.paused) return { slots, start: [], placements: new Map() };
  const { start, placements } = decideDispatch(dispatchState(slots), { withReasons: false });
  if (start.length === 0) return { slots, start, placements };
  const starting = new Set(start);
  const queued = new Map<string, readonly QueuedRun[]>();
  for (const [queue, items] of slots.queued) {
    const rest = items.filter((item) => !starting.has(item));
    if (rest.length > 0) queued.set(queue, rest);
  }
  let next: Slots = { ...slots, queued };
  for (const run of start) {
    next = { ...next, reserved: withCount(next.reserved, run.name, 1), ...joinQueue(next, run.name, run.dagRunId, run.queue) };
  }
  if (placements.size > 0) {
    const placed = new Map(next.placed);
    for (const [run, worker] of placements) placed.set(runKey(run.name, run.dagRunId), worker);
    next = { ...next, placed };
  }
  return { slots: next, start, placements };
}

/** What each queued run waits for, by run key. */
export function waitReasons(slots: Slots): Map<string, WaitReason> {
  const { waiting } = decideDispatch(dispatchState(slots));
  return waiting;
}

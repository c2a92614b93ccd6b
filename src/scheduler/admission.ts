// Admission of a run, a pure decision over the scheduler's context: every way a run can begin asks
// here, through the scheduler actor, and gets one answer. Admitted (with its slot), queued (with
// what it waits for) or refused (with the code of docs/api.md).
import { AppError, pickWorker, runKey, selectorMatches } from '../core/index.ts';
import type { QueuedRun, WaitReason } from './queue-order.ts';
import {
  admittedCount, customQueueBusy, findQueued, isActive, joinQueue, placedPerWorker, queuedCount, withCount, withQueued,
  type Slot, type Slots,
} from './slots.ts';

/**
 * How a run asks to begin. The kind decides which limits hold it back and which code refuses it:
 * - start, inline: singleton and maxActiveRuns refuse it (start's singleton conflict is
 *   already_running, an inline run's max_run_reached);
 * - enqueue: singleton refuses it; it waits for everything else;
 * - reschedule: a singleton that waits when its DAG's custom queue is busy, else starts;
 * - retry: holds a slot as a start does (maxActiveRuns), the run it retries must not be running;
 * - resume: a run a crash interrupted goes on, admitted before: no limit holds it back;
 * - sub: a sub DAG run of an active run: no limit holds it back, as its parent waits for it.
 */
export interface AdmissionAsk {
  kind: 'start' | 'inline' | 'enqueue' | 'reschedule' | 'retry' | 'resume' | 'sub';
  name: string;
  dagRunId: string;
  /** The queue it counts against, or waits in; a sub DAG run has none. */
  queue?: string;
  maxActiveRuns: number;
  singleton?: boolean;
  /** The stored DAG a queued run came from (a suspended DAG's runs wait). */
  fileName?: string;
  /** retry and resume: the id of the run it runs again (its own id when they are the same). */
  prior?: string;
  /** retry: a sub DAG run retried alone, which maxActiveRuns does not hold back (its parent's start did not wait for it). */
  uncounted?: boolean;
  /** sub: the run's stored record says it runs or waits already. */
  storedActive?: boolean;
  /** enqueue (an inline spec's): refused while the DAG name has a run queued, or maxActiveRuns runs active. */
  refusedWhenBusy?: boolean;
  /** enqueue, reschedule, and a start that waits for a worker: what its start needs, kept while it waits. */
  start?: QueuedRun['start'];
  /**
   * The labels a worker must carry to run it. Under distributed dispatch a start or an inline run
   * with them waits in its queue, as an enqueued run does, until a worker carrying them has room
   * (maxActiveRuns and singleton refuse it as a start's); one that would leave its queue at once
   * goes to its worker without waiting. Without distributed dispatch, they choose nothing.
   */
  workerSelector?: Readonly<Record<string, string>>;
}

export type Admission =
  | { outcome: 'admitted'; slot: Slot }
  | { outcome: 'queued'; queue: string; waitingFor?: WaitReason }
  | { outcome: 'refused'; error: AppError };

export interface AdmissionRequest {
  name: string;
  maxActiveRuns: number;
  singleton: boolean;
  /** Runs of this DAG name that are active or about to be. */
  active: number;
  /** Runs of this DAG name waiting in a queue: a singleton start waits for them too. */
  queued?: number;
  /** start answers a singleton conflict with already_running; enqueue and inline runs with max_run_reached. */
  kind: 'start' | 'inline';
}

export function admissionError(request: AdmissionRequest): AppError | undefined {
  if (request.singleton && request.active + (request.queued ?? 0) > 0) {
    const code = request.kind === 'start' ? 'already_running' : 'max_run_reached';
    const what = request.active > 0 ? 'running' : 'queued';
    return new AppError(code, `DAG ${request.name} is already ${what} (singleton mode)`);
  }
  if (request.maxActiveRuns !== -1 && request.active >= request.maxActiveRuns) {
    return new AppError('max_run_reached', `DAG ${request.name} has reached maxActiveRuns (${request.maxActiveRuns})`);
  }
  return undefined;
}

/** The answer, and the context it leaves: a queued run is added to its queue (and the caller dispatches). */
export interface AdmissionDecision {
  answer: Admission;
  next?: Partial<Slots>;
}

const refused = (error: AppError): AdmissionDecision => ({ answer: { outcome: 'refused', error } });

export function decideAdmission(slots: Slots, ask: AdmissionAsk): AdmissionDecision {
  const { name, dagRunId } = ask;
  if (slots.admitting === 'closed' || (slots.admitting === 'draining' && ask.kind !== 'sub')) {
    return refused(new AppError('internal_error', 'the server is shutting down'));
  }
  const key = runKey(name, dagRunId);
  // The queued runs of the name are counted for a singleton alone: a count walks every queue.
  const limits = (kind: 'start' | 'inline', singleton: boolean, maxActiveRuns: number) => admissionError({
    name, maxActiveRuns, singleton, kind, active: admittedCount(slots, name), queued: singleton ? queuedCount(slots, name) : 0,
  });
  switch (ask.kind) {
    case 'sub': {
      if (slots.starting.has(key) || isActive(slots, name, dagRunId) || ask.storedActive) {
        return refused(new AppError('already_running', `sub DAG run ${name}/${dagRunId} is running`));
      }
      // A call step's workerSelector: a worker now, or none (its caller's step fails, naming the labels).
      const placed = slots.ownLabels && ask.workerSelector ? onThisWorker(slots.ownLabels, ask.workerSelector) : placeNow(slots, ask.workerSelector);
      if (placed instanceof AppError) return refused(placed);
      return admit(slots, { name, dagRunId, counted: false, sub: true, ...placed });
    }
    case 'retry':
    case 'resume': {
      const prior = ask.prior ?? dagRunId;
      const priorKey = runKey(name, prior);
      if (slots.starting.has(priorKey) || isActive(slots, name, prior)) {
        return refused(new AppError('already_running', `dag-run ${prior} of DAG ${name} is running`));
      }
      if (findQueued(slots, name, prior)) return refused(new AppError('already_running', `dag-run ${prior} of DAG ${name} is queued`));
      if (prior !== dagRunId && isTaken(slots, name, dagRunId)) return refused(taken(name, dagRunId));
      // A retry holds a slot as a start does; a resumed run was admitted before its crash.
      const counted = ask.kind === 'retry' && !ask.uncounted;
      const error = counted ? limits('start', false, ask.maxActiveRuns) : undefined;
      if (error) return refused(error);
      // Its worker now, or none: an attempt that goes on from an earlier one does not wait in a queue.
      const placed = placeNow(slots, ask.workerSelector);
      if (placed instanceof AppError) return refused(placed);
      return admit(slots, { name, dagRunId, counted, queue: ask.queue, ...(prior !== dagRunId ? { retried: priorKey } : {}), ...placed });
    }
    default: {
      if (isTaken(slots, name, dagRunId)) return refused(taken(name, dagRunId));
      const waitsForLimits = ask.kind === 'enqueue' || (ask.kind === 'reschedule' && customQueueBusy(slots, ask.queue!));
      const selector = slots.workers ? ask.workerSelector : undefined;
      // An enqueued run waits for maxActiveRuns; singleton alone refuses it (an inline enqueue is refused by both).
      const kind = ask.kind === 'start' ? 'start' : 'inline';
      const singleton = ask.kind === 'reschedule' || ask.singleton === true;
      const error = limits(kind, singleton, waitsForLimits && !ask.refusedWhenBusy ? -1 : ask.maxActiveRuns);
      if (error) return refused(error);
      if (ask.refusedWhenBusy && queuedCount(slots, name) > 0) return refused(new AppError('max_run_reached', `DAG ${name} already has a queued run`));
      if (!waitsForLimits && !selector) return admit(slots, { name, dagRunId, counted: true, queue: ask.queue });
      // A start for a worker that would leave its queue at once goes to the worker straight away.
      const placed = !waitsForLimits && selector && leavesQueueAtOnce(slots, ask) ? placeNow(slots, selector) : undefined;
      if (placed && !(placed instanceof AppError)) return admit(slots, { name, dagRunId, counted: true, queue: ask.queue, ...placed });
      const run: QueuedRun = {
        queue: ask.queue!, name, dagRunId, maxActiveRuns: ask.maxActiveRuns, ...(ask.fileName ? { fileName: ask.fileName } : {}),
        ...(selector ? { workerSelector: selector } : {}), start: ask.start,
      };
      return { answer: { outcome: 'queued', queue: run.queue }, next: withQueued(slots, run) };
    }
  }
}

function admit(slots: Slots, slot: Slot): AdmissionDecision {
  const starting = new Map(slots.starting).set(runKey(slot.name, slot.dagRunId), slot);
  if (slot.retried) starting.set(slot.retried, slot);
  const counted = slot.counted ? { reserved: withCount(slots.reserved, slot.name, 1), ...joinQueue(slots, slot.name, slot.dagRunId, slot.queue) } : {};
  const placed = slot.worker ? { placed: new Map(slots.placed).set(runKey(slot.name, slot.dagRunId), slot.worker) } : {};
  return { answer: { outcome: 'admitted', slot }, next: { starting, ...counted, ...placed } };
}

/** On a worker, a sub DAG run with its own selector runs there when the worker carries the labels; it is never sent to a worker without them. */
function onThisWorker(own: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>>): object | AppError {
  if (selectorMatches(selector, own)) return {};
  return new AppError('bad_request', `the sub DAG run needs a worker carrying ${labelsText(selector)}: a run on a worker starts its sub DAG runs on that worker, which does not carry them`);
}

const labelsText = (selector: Readonly<Record<string, string>>) => Object.entries(selector).map(([key, value]) => `${key}=${value}`).join(',');

/** A worker with room for a run with `selector` now (distributed dispatch); none needed without one; the refusal when none has room. */
function placeNow(slots: Slots, selector: Readonly<Record<string, string>> | undefined): { worker?: string } | AppError {
  if (!selector || !slots.workers) return {};
  const pick = pickWorker(selector, slots.workers(), placedPerWorker(slots.placed));
  if (pick.kind === 'worker') return { worker: pick.id };
  const labels = labelsText(selector);
  return new AppError('max_run_reached', pick.kind === 'no-worker'
    ? `no worker carries the labels ${labels}: start one with them, then try again`
    : `every worker carrying the labels ${labels} runs as many runs as it may (${pick.workers.join(', ')}): try again when one has room`);
}

/** Nothing waits ahead of it in its queue, which has room, and its DAG is not suspended. */
function leavesQueueAtOnce(slots: Slots, ask: AdmissionAsk): boolean {
  const queue = ask.queue!;
  if ((slots.queued.get(queue)?.length ?? 0) > 0 || customQueueBusy(slots, queue)) return false;
  return ask.fileName === undefined || !slots.isSuspended(ask.fileName);
}

/** Being started, active, queued, or stored: an id a new run cannot take. */
function isTaken(slots: Slots, name: string, dagRunId: string): boolean {
  return slots.starting.has(runKey(name, dagRunId)) || isActive(slots, name, dagRunId) || findQueued(slots, name, dagRunId) !== undefined || slots.isStored(name, dagRunId);
}

const taken = (name: string, dagRunId: string) => new AppError('already_exists', `dag-run ID ${dagRunId} already exists for DAG ${name}`);

/** What a run still queued after a dispatch waits for: the first limit that holds it back. */
export function waitReasonOf(slots: Slots, run: QueuedRun): WaitReason {
  const limit = slots.queueLimits.get(run.queue);
  if (limit !== undefined && limit >= 0 && (slots.byQueue.get(run.queue) ?? 0) >= limit) return 'queue';
  if (run.fileName !== undefined && slots.isSuspended(run.fileName)) return 'suspended';
  if (run.maxActiveRuns >= 0 && admittedCount(slots, run.name) >= run.maxActiveRuns) return 'maxActiveRuns';
  if (run.workerSelector && slots.workers) return 'worker';
  return 'queue';
}

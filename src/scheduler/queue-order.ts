// Which queued runs start now, and why the others wait. A pure decision over the scheduler's counts:
// the scheduler actor calls it on every event that can free or fill a slot (a run finished, a run
// was enqueued, a limit changed, a DAG was resumed), never on a timer.
//
// Two limits hold at once: a queue's own (a custom queue's maxConcurrency; a DAG's own queue is
// limited by its maxActiveRuns) and the DAG's maxActiveRuns, wherever its runs come from. Each
// queue is served first in, first out; an item held back by its DAG (its maxActiveRuns reached, or
// suspended) keeps its place and lets the items behind it of other DAGs go, so one DAG cannot
// block a shared queue, and queues never block each other.

import { pickWorker, runKey, type Dag, type RunRecord, type WorkerView } from '../core/index.ts';

/** What a queued run's start needs, kept with it while it waits: a dispatch parses nothing. */
export interface QueuedStart {
  dag: Dag;
  specText: string;
  /** As the request gave them: evaluated when the run starts. */
  params?: string;
  fileName?: string;
  /** Its queued record. */
  record: RunRecord;
}

/** A run waiting in a queue; a queue's runs are listed first in first. */
export interface QueuedRun {
  queue: string;
  name: string;
  dagRunId: string;
  /** The stored DAG it came from; absent for an inline spec. */
  fileName?: string;
  /** The DAG's maxActiveRuns when the run was enqueued; -1 is unlimited. */
  maxActiveRuns: number;
  /** The labels a worker must carry to run it; absent when it runs here (or names none). */
  workerSelector?: Readonly<Record<string, string>>;
  /** What its start needs; the decision here never reads it. */
  start?: QueuedStart;
}

export interface DispatchState {
  /** Each queue's items, first in first. */
  queued: ReadonlyMap<string, readonly QueuedRun[]>;
  /** Runs active (or being started) per queue they came through. */
  runningByQueue: ReadonlyMap<string, number>;
  /** Runs active (or being started) per DAG name, however they were started. */
  runningByName: ReadonlyMap<string, number>;
  /** A custom queue's maxConcurrency; queues not here are DAG queues, limited by maxActiveRuns alone. */
  queueLimits: ReadonlyMap<string, number>;
  /** Whether a stored DAG file is suspended: asked once per file and decision (a read of the store). */
  isSuspended: (fileName: string) => boolean;
  /**
   * Distributed dispatch: the workers as last heard, and the runs placed on each (starting or
   * active). Absent when this server runs every run itself (a workerSelector then chooses nothing).
   */
  workers?: { list: readonly WorkerView[]; placed: ReadonlyMap<string, number> };
}

/**
 * What a queued run waits for: a slot of its queue, its DAG's maxActiveRuns, its DAG's resume, or
 * a worker carrying its labels with room for it.
 */
export type WaitReason = 'queue' | 'maxActiveRuns' | 'suspended' | 'worker';

export interface DispatchDecision {
  /** Runs to start now, in the order they should start. */
  start: QueuedRun[];
  /** Every run left waiting (by waitKey), with what holds it back. */
  waiting: Map<string, WaitReason>;
  /** The worker each run to start with a workerSelector goes to. */
  placements: Map<QueuedRun, string>;
}

const unlimited = (limit: number) => limit < 0;

/** A waiting run's key: ids are unique per DAG name only. */
export const waitKey = (run: { name: string; dagRunId: string }) => runKey(run.name, run.dagRunId);

/**
 * `withReasons: false` (a dispatch, which needs only what starts) leaves `waiting` empty and skips
 * the rest of a custom queue once it is full: the cost of an event does not grow with a long queue.
 */
export function decideDispatch(state: DispatchState, { withReasons = true } = {}): DispatchDecision {
  const byName = new Map(state.runningByName);
  const start: QueuedRun[] = [];
  const waiting = new Map<string, WaitReason>();
  const placements = new Map<QueuedRun, string>();
  // Runs placed by this decision count against their worker as those placed before.
  const placed = state.workers ? new Map(state.workers.placed) : undefined;
  const noRoomFor = new Set<string>();
  const suspended = new Map<string, boolean>();
  const isSuspended = ({ fileName }: QueuedRun) => {
    // An inline spec has no file to suspend.
    if (fileName === undefined) return false;
    let flag = suspended.get(fileName);
    if (flag === undefined) suspended.set(fileName, (flag = state.isSuspended(fileName)));
    return flag;
  };
  for (const [queue, items] of state.queued) {
    const limit = state.queueLimits.get(queue);
    let running = state.runningByQueue.get(queue) ?? 0;
    for (const item of items) {
      const queueFull = limit !== undefined && !unlimited(limit) && running >= limit;
      if (queueFull) {
        if (!withReasons) break;
        waiting.set(waitKey(item), 'queue');
        continue;
      }
      if (isSuspended(item)) {
        if (withReasons) waiting.set(waitKey(item), 'suspended');
        continue;
      }
      const active = byName.get(item.name) ?? 0;
      if (!unlimited(item.maxActiveRuns) && active >= item.maxActiveRuns) {
        // A DAG's own queue is full exactly when its DAG is: say the limit the operator can change.
        if (withReasons) waiting.set(waitKey(item), 'maxActiveRuns');
        continue;
      }
      if (item.workerSelector && state.workers && placed) {
        // Placements only add up within a decision: labels no worker had room for stay so, and
        // the many runs that wait for them are not matched against every worker again.
        const labels = selectorKey(item.workerSelector);
        const pick = noRoomFor.has(labels) ? undefined : pickWorker(item.workerSelector, state.workers.list, placed);
        if (pick?.kind !== 'worker') {
          if (pick) noRoomFor.add(labels);
          // Held back by its labels alone: the runs behind it go (other labels, or none).
          if (withReasons) waiting.set(waitKey(item), 'worker');
          continue;
        }
        placed.set(pick.id, (placed.get(pick.id) ?? 0) + 1);
        placements.set(item, pick.id);
      }
      start.push(item);
      running++;
      byName.set(item.name, active + 1);
    }
  }
  return { start, waiting, placements };
}

/** Each waiting run's selector's key, made once: a dispatch reads it for every run that waits. */
const selectorKeys = new WeakMap<object, string>();

/** The same text for the same pairs, in any order. */
function selectorKey(selector: Readonly<Record<string, string>>): string {
  let key = selectorKeys.get(selector);
  if (key === undefined) {
    key = JSON.stringify(Object.entries(selector).sort(([one], [other]) => (one < other ? -1 : one > other ? 1 : 0)));
    selectorKeys.set(selector, key);
  }
  return key;
}

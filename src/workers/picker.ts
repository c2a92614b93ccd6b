// Which worker takes a DAG run with a workerSelector: one whose labels carry every pair of the
// selector, whose heartbeat is not stale, and that runs fewer runs than its limit, counting the
// runs handed to it that its heartbeat does not show yet. The least busy first (by its share of
// its limit), then the one with the most room, then by id, so that the choice is the same for the
// same state.
import { selectorMatches } from './labels.ts';
import type { WorkerView } from './registry.ts';

export type Pick =
  | { kind: 'worker'; id: string }
  /** No worker carries the labels (or none that is alive): the run waits for one. */
  | { kind: 'no-worker'; selector: Record<string, string> }
  /** Workers carry them, and each runs as many runs as it may: the run waits for room. */
  | { kind: 'all-busy'; workers: string[] };

/**
 * `handedOut`: per worker, the runs given to it and not yet ended, as the server counts them
 * (a heartbeat lags behind: the larger of the two counts).
 */
export function pickWorker(selector: Readonly<Record<string, string>>, workers: readonly WorkerView[], handedOut: ReadonlyMap<string, number> = new Map()): Pick {
  const able = workers.filter((worker) => worker.healthStatus !== 'unhealthy' && selectorMatches(selector, worker.labels));
  if (able.length === 0) return { kind: 'no-worker', selector: { ...selector } };
  const load = (worker: WorkerView) => Math.max(worker.busyPollers, handedOut.get(worker.id) ?? 0);
  const free = able.filter((worker) => load(worker) < worker.totalPollers);
  if (free.length === 0) return { kind: 'all-busy', workers: able.map((worker) => worker.id).sort() };
  free.sort((one, other) => load(one) / one.totalPollers - load(other) / other.totalPollers
    || (other.totalPollers - load(other)) - (one.totalPollers - load(one))
    || (one.id < other.id ? -1 : one.id > other.id ? 1 : 0));
  return { kind: 'worker', id: free[0].id };
}

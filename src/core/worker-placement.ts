// Workers as the server sees them (Dagu's shape), and which worker takes a DAG run with a workerSelector: one whose labels carry every pair of the
// selector, whose heartbeat is not stale, and that runs fewer runs than its limit, counting the
// runs handed to it that its heartbeat does not show yet. The least busy first (by its share of
// its limit), then the one with the most room, then by id, so that the choice is the same for the
// same state.
import { selectorMatches } from './worker-labels.ts';

/** Dagu's thresholds: a heartbeat under 5 s old is healthy, under 15 s a warning, older unhealthy. */
const HEALTHY_MS = 5_000;
const WARNING_MS = 15_000;

export interface RunningTask {
  dagRunId: string;
  dagName: string;
  startedAt: string;
  rootDagRunName?: string;
  rootDagRunId?: string;
  parentDagRunName?: string;
  parentDagRunId?: string;
}

export type HealthStatus = 'healthy' | 'warning' | 'unhealthy';

/** A worker as `GET /workers` shows it (Dagu's fields). */
export interface WorkerView {
  id: string;
  labels: Record<string, string>;
  totalPollers: number;
  busyPollers: number;
  runningTasks: RunningTask[];
  lastHeartbeatAt: string;
  healthStatus: HealthStatus;
}

export function healthOf(ageMs: number): HealthStatus {
  return ageMs < HEALTHY_MS ? 'healthy' : ageMs < WARNING_MS ? 'warning' : 'unhealthy';
}

export type WorkerPick =
  | { kind: 'worker'; id: string }
  /** No worker carries the labels (or none that is alive): the run waits for one. */
  | { kind: 'no-worker'; selector: Record<string, string> }
  /** Workers carry them, and each runs as many runs as it may: the run waits for room. */
  | { kind: 'all-busy'; workers: string[] };

/**
 * `handedOut`: per worker, the runs the server placed on it and has not seen end (none for a
 * worker it is not in). When given, it is the count: a worker's own (busyPollers) is as old as its
 * last heartbeat, and would hold a slot taken for up to a second after its run ended.
 */
export function pickWorker(selector: Readonly<Record<string, string>>, workers: readonly WorkerView[], handedOut?: ReadonlyMap<string, number>): WorkerPick {
  const able = workers.filter((worker) => worker.healthStatus !== 'unhealthy' && selectorMatches(selector, worker.labels));
  if (able.length === 0) return { kind: 'no-worker', selector: { ...selector } };
  const load = (worker: WorkerView) => (handedOut ? handedOut.get(worker.id) ?? 0 : worker.busyPollers);
  const free = able.filter((worker) => load(worker) < worker.totalPollers);
  if (free.length === 0) return { kind: 'all-busy', workers: able.map((worker) => worker.id).sort() };
  free.sort((one, other) => load(one) / one.totalPollers - load(other) / other.totalPollers
    || (other.totalPollers - load(other)) - (one.totalPollers - load(one))
    || (one.id < other.id ? -1 : one.id > other.id ? 1 : 0));
  return { kind: 'worker', id: free[0].id };
}

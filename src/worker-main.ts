// `troupe worker`: a process that takes DAG runs from a troupe server through Redis and runs them
// with the engine of its own scratch home (src/distributed/worker-runs.ts does the work).

export interface WorkerOptions {
  /** redis:// or rediss:// URL, credentials included (never shown unmasked). */
  redisUrl: string;
  /** What a DAG's workerSelector is matched against. */
  labels: Record<string, string>;
  /** The most runs at once (its "pollers"); at least 1. */
  maxActiveRuns: number;
  /** Default: the host name and the process id. */
  id?: string;
  /** Its scratch home (runs' files, logs, its own store); default ~/.troupe-worker/<id>. */
  home?: string;
}

export interface RunningWorker {
  id: string;
  /** Takes nothing new; waits up to `graceMs` for the runs under way, then stops them; leaves the registry. */
  drain(graceMs: number): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  void options;
  throw new Error('troupe worker is not wired yet');
}

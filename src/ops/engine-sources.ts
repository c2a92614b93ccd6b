// What the metrics read from a running troupe, read the way the API reads it.
import { RunStatus, type DagStore, type RunStore, type SpanSink, type WorkerView } from '../core/index.ts';
import type { Engine } from '../engine/index.ts';
import type { CronScheduler } from '../scheduler/index.ts';
import type { EventCounts, MetricsSources } from './metrics.ts';

export interface EngineParts {
  engine: Engine;
  runs: RunStore;
  dags: DagStore;
  cron: CronScheduler;
  version: string;
  buildDate: string;
  startedAtMs: number;
  /** The server's event streams: their clients, events sent, clients dropped. */
  eventStreams?: () => Omit<EventCounts, 'kept'>;
  /** Hands the event streams what to tell of each write's delay since the commit. */
  watchEventDelay?: (observe: (seconds: number) => void) => void;
  /** Distributed dispatch only: the workers as last heard through Redis (read at each scrape, never waiting on Redis). */
  workers?: () => readonly WorkerView[];
  /** Where traced runs' spans are exported. */
  spans?: SpanSink;
}

export function engineSources(parts: EngineParts): MetricsSources {
  const { engine, runs, dags, cron } = parts;
  return {
    version: parts.version,
    buildDate: parts.buildDate,
    startedAtMs: parts.startedAtMs,
    subscribe: (listener) => engine.subscribe(listener),
    // The active runs (a few) rather than the store's runs (up to millions); a record is counted
    // as GET /dag-runs?status=1 lists it: a root run whose stored status is running.
    runningRuns: () => {
      let count = 0;
      for (const { name, dagRunId } of engine.activeRuns()) {
        const record = runs.get(name, dagRunId);
        if (record?.status === RunStatus.Running && record.parentDAGRunId === '') count++;
      }
      return count;
    },
    queuedRuns: () => engine.queues().reduce((sum, queue) => sum + queue.queued.length, 0),
    dagCount: async () => (await dags.fileNames()).length,
    schedulerRunning: () => cron.running,
    ...(parts.spans ? { spans: () => parts.spans!.counts() } : {}),
    ...(parts.eventStreams ? { events: () => ({ ...parts.eventStreams!(), kept: runs.events.size }) } : {}),
    ...(parts.watchEventDelay ? { watchEventDelay: parts.watchEventDelay } : {}),
    ...(parts.workers ? { workers: parts.workers, runsOnWorkers: () => runsOnWorkers(engine, runs) } : {}),
  };
}

/** The engine's active runs whose record names a worker: the ones a worker runs for this server. */
function runsOnWorkers(engine: Engine, runs: RunStore): number {
  let count = 0;
  for (const { name, dagRunId } of engine.activeRuns()) if (runs.get(name, dagRunId)?.workerId !== undefined) count++;
  return count;
}

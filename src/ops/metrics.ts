// The Prometheus metrics of docs/metrics.md, in a registry of troupe's own (never prom-client's
// global one: an embedder's metrics and two servers in one process stay apart).
// Gauges are read from the engine when scraped, so they agree with the API at that moment; totals
// and histograms are counted from the engine's events as they happen, never from a scan of the store.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineEvent, EngineListener } from '../engine/index.ts';
import { isRunEvent, type HealthStatus, type SpanCounts, type WorkerView } from '../core/index.ts';

export interface MetricsSources {
  version: string;
  /** ISO time the running code was built. */
  buildDate: string;
  startedAtMs: number;
  subscribe(listener: EngineListener): () => void;
  /** Root runs running, as `GET /dag-runs?status=1` lists them. */
  runningRuns(): number;
  /** Runs waiting in a queue, as `GET /queues` counts them. */
  queuedRuns(): number;
  dagCount(): Promise<number>;
  schedulerRunning(): boolean;
  /** The event streams (a server's; none for an engine alone) and the event log. */
  events?(): EventCounts;
  /** Hands the event streams what to call, per write of live events, with how long its oldest event waited since its commit. */
  watchEventDelay?(observe: (seconds: number) => void): void;
  /** Distributed dispatch only: the workers as last heard through Redis, and the active runs placed on them. */
  workers?(): readonly WorkerView[];
  runsOnWorkers?(): number;
  /** Traced runs' spans: sent to their collectors, and dropped. */
  spans?(): SpanCounts;
}

export interface EventCounts {
  /** Clients following the event stream now. */
  subscribers: number;
  /** Events written to clients since the server started. */
  sent: number;
  /** Clients disconnected for falling too far behind, since the server started. */
  dropped: number;
  /** Events the log keeps. */
  kept: number;
}

const PREFIX = 'troupe_';

/** The spec's label values (the API's status labels: succeeded, failed, canceled), and partial success. */
const RUN_END_LABELS: Partial<Record<EngineEvent['type'], string>> = {
  'run.succeeded': 'succeeded',
  'run.failed': 'failed',
  'run.aborted': 'canceled',
  'run.partially_succeeded': 'partially_succeeded',
};

const STEP_END_LABELS: Partial<Record<EngineEvent['type'], string>> = {
  'step.succeeded': 'succeeded',
  'step.failed': 'failed',
  'step.aborted': 'aborted',
  'step.partially_succeeded': 'partially_succeeded',
};

/** Any other method is counted as `other`: a client must not grow the label set at will. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Counters and histograms bound to their label values once, so that an event looks nothing up by name. */
interface Bound {
  inc(): void;
  observe(value: number): void;
}

export class TroupeMetrics {
  readonly registry = new Registry();
  private readonly unsubscribe: () => void;
  private readonly runEnds = new Map<string, Bound>();
  private readonly stepEnds = new Map<string, { observe(value: number): void }>();
  private readonly queueWait: Histogram;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    new Gauge({
      name: `${PREFIX}info`, help: 'Build information, value 1 (go_version holds the Node.js version)',
      labelNames: ['version', 'build_date', 'go_version'], registers,
    }).set({ version: sources.version, build_date: sources.buildDate, go_version: process.version }, 1);
    new Gauge({
      name: `${PREFIX}uptime_seconds`, help: 'Seconds since server start', registers,
      collect() { this.set(Math.floor((Date.now() - sources.startedAtMs) / 1000)); },
    });
    new Gauge({
      name: `${PREFIX}dag_runs_currently_running`, help: 'Root DAG runs running (GET /dag-runs?status=1)', registers,
      collect() { this.set(sources.runningRuns()); },
    });
    new Gauge({
      name: `${PREFIX}dag_runs_queued_total`, help: 'DAG runs waiting in a queue (GET /queues)', registers,
      collect() { this.set(sources.queuedRuns()); },
    });
    new Gauge({
      name: `${PREFIX}dags_total`, help: 'DAG definition files', registers,
      async collect() { this.set(await sources.dagCount()); },
    });
    new Gauge({
      name: `${PREFIX}scheduler_running`, help: '1 when the scheduler runs DAGs on their schedules, else 0', registers,
      collect() { this.set(sources.schedulerRunning() ? 1 : 0); },
    });
    const runsTotal = new Counter({
      name: `${PREFIX}dag_runs_total`, help: 'Root DAG runs ended since the server started, by status (each attempt counts)',
      labelNames: ['status'], registers,
    });
    const runDuration = new Histogram({
      name: `${PREFIX}dag_run_duration_seconds`, help: 'Root DAG runs from start to end, by status',
      labelNames: ['status'], buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 21600, 86400], registers,
    });
    for (const [type, status] of Object.entries(RUN_END_LABELS)) {
      const total = runsTotal.labels(status);
      // Every status is listed from the start, at 0: rate() and alerts need the series to exist.
      total.inc(0);
      runDuration.zero({ status });
      const duration = runDuration.labels(status);
      this.runEnds.set(type, { inc: () => total.inc(), observe: (value) => duration.observe(value) });
    }
    this.queueWait = new Histogram({
      name: `${PREFIX}dag_run_queue_wait_seconds`, help: 'DAG runs from queued to started',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 21600], registers,
    });
    const stepDuration = new Histogram({
      name: `${PREFIX}step_duration_seconds`, help: 'Steps from start to end, by status (sub DAG runs\' steps included)',
      labelNames: ['status'], buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600], registers,
    });
    for (const [type, status] of Object.entries(STEP_END_LABELS)) {
      stepDuration.zero({ status });
      this.stepEnds.set(type, stepDuration.labels(status));
    }
    this.httpDuration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`, help: 'API requests from arrival to response, by method, route template and status code',
      labelNames: ['method', 'route', 'status_code'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers,
    });
    if (sources.events) eventMetrics(sources.events, registers);
    if (sources.spans) spanMetrics(sources.spans, registers);
    if (sources.workers && sources.runsOnWorkers) workerMetrics(sources.workers, sources.runsOnWorkers, registers);
    if (sources.watchEventDelay) {
      const delay = new Histogram({
        name: `${PREFIX}event_delivery_seconds`,
        help: 'From an event\'s commit to its write to an event stream client\'s connection (the oldest event of each write)',
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers,
      });
      sources.watchEventDelay((seconds) => delay.observe(seconds));
    }
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.unsubscribe = sources.subscribe(this.onEvent);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** `route` is the route's template (`/dag-runs/:name/:dagRunId`), never the path: the series stay few. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method: METHODS.has(method) ? method : 'other', route, status_code: statusCode }, seconds);
  }

  close(): void {
    this.unsubscribe();
  }

  // Runs once per step and run transition: a map lookup and, at an end, one observation.
  private readonly onEvent = (event: EngineEvent): void => {
    if ('stepName' in event) {
      const ended = this.stepEnds.get(event.type);
      if (ended) observeSpan(ended, event.startedAt, event.finishedAt);
      return;
    }
    if (!isRunEvent(event) || event.parentDAGRunId !== '') return;
    if (event.type === 'run.running') {
      if (event.queuedAt !== '') observeSpan(this.queueWait, event.queuedAt, event.startedAt);
      return;
    }
    const ended = this.runEnds.get(event.type);
    if (!ended) return;
    ended.inc();
    // A run that never started (dequeued, or failed to leave its queue) has no duration.
    if (event.startedAt !== '') observeSpan(ended, event.startedAt, event.finishedAt);
  };
}

function observeSpan(into: { observe(value: number): void }, from: string, to: string): void {
  const seconds = (Date.parse(to) - Date.parse(from)) / 1000;
  if (seconds >= 0) into.observe(seconds);
}

/**
 * A counter of a total kept elsewhere (the event streams, the span exports): each scrape adds what
 * came since the last.
 */
function keptTotal(name: string, help: string, read: () => number, registers: Registry[]): void {
  let told = 0;
  new Counter({
    name: `${PREFIX}${name}`, help, registers,
    collect() {
      const now = read();
      this.inc(now - told);
      told = now;
    },
  });
}

/** Traced runs' spans, read when scraped. */
function spanMetrics(read: () => SpanCounts, registers: Registry[]): void {
  keptTotal('trace_spans_exported_total', 'Spans of traced runs their collectors took since the server started', () => read().exported, registers);
  keptTotal('trace_spans_dropped_total', 'Spans of traced runs dropped since the server started: their collector was down, refused them, did not answer in time, or fell too far behind', () => read().dropped, registers);
}

/** The event streams' gauges and totals, read when scraped. */
function eventMetrics(read: () => EventCounts, registers: Registry[]): void {
  new Gauge({
    name: `${PREFIX}event_subscribers`, help: 'Clients following the event stream (Server-Sent Events and WebSocket)', registers,
    collect() { this.set(read().subscribers); },
  });
  new Gauge({
    name: `${PREFIX}event_log_events`, help: 'Events the event log keeps', registers,
    collect() { this.set(read().kept); },
  });
  keptTotal('events_sent_total', 'Events written to event stream clients since the server started', () => read().sent, registers);
  keptTotal('event_subscribers_dropped_total', 'Event stream clients disconnected for falling too far behind', () => read().dropped, registers);
}

const HEALTHS: readonly HealthStatus[] = ['healthy', 'warning', 'unhealthy'];

/** The workers' gauges, read when scraped: a worker that left is gone from the next scrape. */
function workerMetrics(workers: () => readonly WorkerView[], runsOnWorkers: () => number, registers: Registry[]): void {
  new Gauge({
    name: `${PREFIX}workers`, help: 'Workers heard through Redis, by health (GET /workers healthStatus)', labelNames: ['health'], registers,
    collect() {
      const counts = new Map<HealthStatus, number>(HEALTHS.map((health) => [health, 0]));
      for (const worker of workers()) counts.set(worker.healthStatus, (counts.get(worker.healthStatus) ?? 0) + 1);
      // Every health is listed, at 0 when no worker has it: an alert on unhealthy workers needs the series.
      for (const [health, count] of counts) this.set({ health }, count);
    },
  });
  const perWorker = (name: string, help: string, of: (worker: WorkerView) => number) => new Gauge({
    name: `${PREFIX}${name}`, help, labelNames: ['worker'], registers,
    collect() {
      this.reset();
      for (const worker of workers()) this.set({ worker: worker.id }, of(worker));
    },
  });
  perWorker('worker_slots', 'Runs a worker may run at once, by worker (GET /workers totalPollers)', (worker) => worker.totalPollers);
  perWorker('worker_busy_slots', 'Runs a worker runs now, by worker (GET /workers busyPollers)', (worker) => worker.busyPollers);
  new Gauge({
    name: `${PREFIX}runs_on_workers`, help: 'Active DAG runs this server placed on workers', registers,
    collect() { this.set(runsOnWorkers()); },
  });
}

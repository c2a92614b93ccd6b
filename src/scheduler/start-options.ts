// What an engine is built from and what a start takes: read by the scheduler's modules (the
// starter, the queues, sub DAG runs) and by the engine that composes them.
import type { Clock, DagStore, OtelSpec, SpanSink, LogStore, QueueStore, RunStore, StepDispatcher, Timers } from '../core/index.ts';
import type { Definitions } from '../catalog/index.ts';

export interface EngineDeps {
  runs: RunStore;
  /** Queue items, written with their runs' records (the same LMDB environment as `runs`). */
  queue: QueueStore;
  /** Custom queues' maxConcurrency by name (config.yaml `queues`); every other queue is a DAG's. */
  queueLimits: ReadonlyMap<string, number>;
  /** How long a dispatched queued run may take to become active before it leaves its queue failed. */
  queuedStartDeadlineMs: number;
  /** The stored DAGs' definitions (the catalog the API reads too). */
  definitions: Definitions;
  /** Where the DAG files are: a run's dotenv files are found from it. */
  dags: DagStore;
  logs: LogStore;
  dispatcher: StepDispatcher;
  /** The server's environment; only the allowed part reaches steps. */
  systemEnv: Record<string, string>;
  /** Where `env` secrets are read from; the server's whole environment by default. */
  processEnv?: Record<string, string | undefined>;
  /** What "now" is (the service's settings give it: the system clock unless a test moves its own). */
  clock: Clock;
  /**
   * What the actors' timers (delaySec, timeouts, retry and repeat waits) run on; Node's timers by
   * default. Tests pass XState's SimulatedClock (with `clock` reading the same time) and never sleep.
   */
  timers?: Timers;
  /** Called when a write to the store fails; the default prints to stderr. */
  onStoreError?: (error: unknown) => void;
  /**
   * The troupe command's engine: it runs what it is asked to and nothing else. Queued runs wait,
   * and runs that a process which crashed left active are left as they are: the server or
   * scheduler that opens the home next resumes or settles them (a command that ends in a moment
   * would abort a run it resumed).
   */
  commandOnly?: boolean;
  /** The `otel` of DAGs without one (config.yaml): their runs are traced by it. */
  otel?: OtelSpec;
  /** Where traced runs' spans go; without it, no run is traced. */
  spans?: SpanSink;
}

export interface StartOptions {
  params?: string;
  /** The W3C traceparent of the caller's span: a traced run's span becomes its child. */
  traceParent?: string;
  dagRunId?: string;
  dagName?: string;
  singleton?: boolean;
}

export interface InlineOptions extends StartOptions {
  spec: string;
  name?: string;
}

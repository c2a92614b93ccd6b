// The engine facade: start, stop and observe runs. A thin composition: the scheduler admits and
// dispatches (src/scheduler), the run dispatcher executes (src/actors), the catalog reads
// definitions (src/catalog); the engine writes what runs report and tells subscribers.
import {
  AppError, NodeStatus, RunStatus, eventsBetween, isoTime, runKey, type Clock, type EngineEvent, type EventBody, type RunRecord,
} from '../core/index.ts';
import {
  LocalRunDispatcher, type PriorAttempt, type RemoteRunDispatcher, type RemoteRunsFactory, type RunDispatcher, type RunInput, type RunReports, type SubDagRunner,
} from '../actors/index.ts';
import type { Definitions } from '../catalog/index.ts';
import {
  ChildRuns, Queueing, RunStarter, Scheduler, rescheduleRun, retryRun, selectorOf, settleInterrupted, settleRuns,
  type EngineDeps, type EnqueueOptions, type InlineOptions, type QueueListing, type RunAgainHost, type StartOptions,
} from '../scheduler/index.ts';
import { RunTransitions, type EngineListener } from './engine-events.ts';
import { followEvents, type FollowOptions } from './event-feed.ts';
import { findRun, findSubRun, readRun, subRunsOf } from './run-lookup.ts';
import { RunWrites } from './run-writes.ts';
import { errorText, log } from '../logging/index.ts';

export type { EngineDeps, InlineOptions, StartOptions };

/**
 * Where admitted runs execute: given what every run reports to and the way its steps start sub
 * DAG runs. The local dispatcher (run actors in this process, steps on the pool) by default.
 */
export type RunDispatcherFactory = (ports: { reports: RunReports; subDags: SubDagRunner }) => RunDispatcher;

export interface EngineParts {
  runDispatcher?: RunDispatcherFactory;
  /** Distributed dispatch: runs with a workerSelector are placed on workers and run there (src/distributed). */
  remoteRuns?: RemoteRunsFactory;
  /** A worker's engine: what its runs report is relayed to its server too (given what it reports here). */
  relayReports?: (reports: RunReports) => RunReports;
  /** A worker's engine: told of each run as it is dispatched, before it reports anything. */
  dispatching?: (run: RunInput) => void;
  /** A worker's engine: its worker's labels (a call step's own workerSelector must be among them). */
  workerLabels?: Readonly<Record<string, string>>;
}

export class Engine {
  private readonly scheduler: Scheduler;
  private readonly runs: RunDispatcher;
  private readonly remote: RemoteRunDispatcher | undefined;
  private readonly transitions = new RunTransitions();
  private readonly clock: Clock;
  private readonly writes: RunWrites;
  private readonly starter: RunStarter;
  private readonly childRuns: ChildRuns;
  private readonly queueing: Queueing;
  private readonly again: RunAgainHost;
  /** Stored DAGs and definitions to check, parsed without holding the event loop. */
  readonly definitions: Definitions;
  /** Set by close: no run starts, not even a sub DAG run. */
  private closed: Promise<void> | undefined;

  constructor(private readonly deps: EngineDeps & EngineParts) {
    const clock = (this.clock = deps.clock);
    this.definitions = deps.definitions;
    const onStoreError = deps.onStoreError ?? ((error) => log.error({ error: errorText(error) }, 'store write failed'));
    this.writes = new RunWrites(deps.runs, deps.logs, onStoreError);
    this.scheduler = new Scheduler({
      queueLimits: deps.queueLimits,
      isSuspended: (fileName) => deps.runs.isSuspended(fileName),
      // Taken from the call: a queued record is not stored until its write commits.
      isStored: (name, dagRunId) => deps.queue.find(name, dagRunId) !== undefined || deps.runs.get(name, dagRunId) !== undefined,
      paused: deps.commandOnly === true,
      ...(deps.remoteRuns ? { workers: () => this.remote!.workers() } : {}),
      ...(deps.workerLabels ? { ownLabels: deps.workerLabels } : {}),
    }, {
      dispatchRun: (input, worker) => {
        deps.dispatching?.(input);
        (worker ? this.remote! : this.runs).start(input, worker);
      },
      stopRun: (name, dagRunId, at) => {
        this.runs.stop(name, dagRunId, at);
        this.remote?.stop(name, dagRunId, at);
      },
      announceFinished: (name, dagRunId, runLog) => this.writes.finished(name, dagRunId, runLog),
      startQueued: (run, slot) => this.queueing.start(run, slot),
    }, deps.timers);
    const subDags: SubDagRunner = {
      start: (call, child) => this.childRuns.start(call, child),
      stop: (name, dagRunId) => this.scheduler.stopRun(name, dagRunId, clock.now()),
    };
    const reports: RunReports = {
      record: (record, changed) => this.writes.persist(record, changed, this.transitions.of(record, changed)),
      logLine: (path, line) => deps.logs.appendRunLog(path, line),
      finished: (end) => this.scheduler.finished(end),
      stored: (name, dagRunId) => this.writes.settled(name, dagRunId),
      ...(deps.spans ? { span: (trace, span) => deps.spans!.add(trace, span) } : {}),
    };
    const relayed = deps.relayReports?.(reports) ?? reports;
    this.runs = deps.runDispatcher?.({ reports: relayed, subDags })
      ?? new LocalRunDispatcher({ steps: deps.dispatcher, clock, subDags, reports: relayed, ...(deps.timers ? { timers: deps.timers } : {}) });
    this.remote = deps.remoteRuns?.({
      reports, workersChanged: () => this.scheduler.poke(),
      workerLost: (name, dagRunId, reason) => void this.workerLost(name, dagRunId, reason),
    });
    const host = {
      deps, scheduler: this.scheduler, clock, definitions: this.definitions, onStoreError,
      eventsOf: (record: RunRecord): EventBody[] => this.transitions.announced(record),
    };
    this.starter = new RunStarter(host);
    this.childRuns = new ChildRuns({ ...host, starter: this.starter, whenFinished: (name, dagRunId) => this.whenFinished(name, dagRunId) });
    this.queueing = new Queueing({ ...host, starter: this.starter });
    this.again = { deps, definitions: this.definitions, starter: this.starter, queueing: this.queueing, findRun: (name, dagRunId) => this.findRun(name, dagRunId) };
  }

  /**
   * Starts the scheduler, takes back the runs a previous process placed on workers, closes the
   * other runs it left active and queues its queued runs again; then hears the workers.
   */
  async start(): Promise<void> {
    this.scheduler.start();
    const { runs, logs, queue } = this.deps;
    if (!this.deps.commandOnly) {
      const onWorkers = await this.adoptRemoteRuns();
      await settleInterrupted({
        runs, logs, definitions: this.definitions, now: this.clock.now(),
        isActive: (name, dagRunId) => this.isActive(name, dagRunId) || onWorkers.has(runKey(name, dagRunId)) || queue.find(name, dagRunId) !== undefined,
        resume: (attempt) => this.retry(attempt.record.name, attempt.record.dagRunId, {}, attempt),
      });
    }
    await this.queueing.restore();
    await this.remote?.connect();
  }

  /**
   * Runs recorded running on a worker go on there while this server is away: they are active again
   * (their trees' keys are given back), and their worker's reports, or its silence, settle them.
   */
  private async adoptRemoteRuns(): Promise<Set<string>> {
    const onWorkers = new Set<string>();
    if (!this.remote) return onWorkers;
    const running = this.deps.runs.list({ status: RunStatus.Running, includeSubRuns: true }).filter((record) => record.workerId !== undefined);
    for (const record of running) {
      onWorkers.add(runKey(record.name, record.dagRunId));
      if (record.parentDAGRunId !== '') continue;
      // The queue it counts against, from the definition it runs.
      const specText = this.deps.runs.getSpec(record.name, record.dagRunId);
      const parsed = specText === undefined ? undefined : await this.definitions.parse(specText, { nameOverride: record.name, fileName: record.fileName }).catch(() => undefined);
      this.scheduler.adopt(record.name, record.dagRunId, record.workerId!, parsed?.dag?.queue ?? record.name);
      this.remote.adopt(record);
    }
    return onWorkers;
  }

  /**
   * A run's worker went away: its slot is freed, and it is settled as a crash settles a run (its
   * sub DAG runs with it): resumed on another worker when a step it was running may retry, else
   * recorded failed with `reason`.
   */
  private async workerLost(name: string, dagRunId: string, reason: string): Promise<void> {
    const { runs, logs } = this.deps;
    const record = runs.get(name, dagRunId);
    if (!record) return;
    this.scheduler.finished({ type: 'run.finished', name, dagRunId, status: RunStatus.Failed, log: record.log });
    await this.whenFinished(name, dagRunId);
    const tree = runs.list({ status: RunStatus.Running, includeSubRuns: true }).filter((run) => run.rootDAGRunName === name && run.rootDAGRunId === dagRunId);
    await settleRuns({
      runs, logs, definitions: this.definitions, now: this.clock.now(), isActive: () => false,
      resume: (attempt) => this.retry(name, dagRunId, {}, attempt),
    }, tree, reason).catch((error: unknown) => log.error({ dag: name, dagRunId, error: errorText(error) }, 'the run of a worker that went away could not be settled'));
  }

  /** Every event as it commits, numbered (docs/events.md); the function given back stops it. */
  subscribe(listener: EngineListener): () => void {
    return this.deps.runs.events.subscribe(listener);
  }

  /**
   * The events after `options.since` (or from now) that match `options.filter`, then each as it
   * commits, until `options.signal` aborts or the loop breaks: the same events and numbers as
   * `GET /events`.
   */
  events(options: FollowOptions = {}): AsyncGenerator<EngineEvent> {
    return followEvents(this.deps.runs.events, options);
  }

  isActive(name: string, dagRunId: string): boolean {
    return this.scheduler.view.isActive(name, dagRunId);
  }

  activeRuns(): Array<{ name: string; dagRunId: string }> {
    return this.scheduler.view.activeRuns();
  }

  /** Starts a run of a stored DAG; gives back its id and the name it runs under (`dagName`, or the DAG's). */
  async startDag(fileName: string, options: StartOptions): Promise<{ dagRunId: string; name: string }> {
    const { dag, text } = await this.definitions.runnable(fileName);
    // Placed on a worker: it waits in its queue until one carrying its labels has room.
    if (this.remote && selectorOf(dag).workerSelector) {
      const { dagRunId } = await this.queueing.submit('start', dag, text, options, fileName);
      return { dagRunId, name: options.dagName ?? dag.name };
    }
    return this.starter.launch(dag, text, options, 'start', fileName);
  }

  async startInline(options: InlineOptions): Promise<{ dagRunId: string; name: string }> {
    const dag = await this.definitions.runnableInline(options.spec, options.name);
    const inline = { ...options, dagName: undefined };
    if (this.remote && selectorOf(dag).workerSelector) {
      const { dagRunId } = await this.queueing.submit('inline', dag, options.spec, inline);
      return { dagRunId, name: dag.name };
    }
    return this.starter.launch(dag, options.spec, inline, 'inline');
  }

  /**
   * Runs an attempt its server planned and placed on this worker (src/distributed): admitted
   * with no limit (the server's scheduler held it to its limits), its first record stored here.
   */
  async runPlanned(input: RunInput): Promise<void> {
    const { name, dagRunId } = input.record;
    const slot = this.starter.admit({ kind: 'resume', name, dagRunId, maxActiveRuns: -1 });
    let saved: Promise<void> = Promise.resolve();
    const beginning = this.scheduler.begin(slot, input, () => {
      try {
        saved = this.deps.runs.save(input.record, undefined, []);
        this.deps.runs.saveSpec(name, dagRunId, input.plan.specText).catch(() => undefined);
      } catch (error) {
        saved = Promise.reject(error);
      }
    });
    if (!beginning.begun) throw beginning.error;
    await saved;
  }

  /** A run of a stored DAG waits in its queue (the DAG's `queue`, its own, or `options.queue`). */
  async enqueueDag(fileName: string, options: EnqueueOptions): Promise<{ dagRunId: string }> {
    const { dag, text } = await this.definitions.runnable(fileName);
    return this.queueing.enqueue(dag, text, options, fileName);
  }

  /**
   * An inline spec waits in its queue: named by its own `name`, else by `options.name`; refused
   * (409 max_run_reached) while its DAG has a run queued or `maxActiveRuns` runs active.
   */
  async enqueueInline(options: InlineOptions & { queue?: string }): Promise<{ dagRunId: string }> {
    const dag = await this.definitions.runnableInline(options.spec, options.name, { nameIfNone: true });
    return this.queueing.enqueue(dag, options.spec, { ...options, dagName: undefined, refusedWhenBusy: true });
  }

  /** Takes a queued run out of its queue, recorded aborted; 404 when it is not queued. */
  dequeue(name: string, runId: string): Promise<void> {
    // `latest` names the DAG's newest run, as in every run path.
    return this.queueing.dequeue(name, this.scheduler.view.isQueued(name, runId) ? runId : this.findRun(name, runId).dagRunId);
  }

  /** The queues as `GET /queues` lists them; `only` that one (none when it has nothing to show). */
  queues(only?: string): QueueListing[] {
    return this.queueing.list(only);
  }

  /** A new run of a finished one, with its stored definition and params (run-again.ts). */
  reschedule(name: string, dagRunId: string, options: { dagRunId?: string; dagName?: string } = {}): Promise<{ dagRunId: string; queued: boolean }> {
    return rescheduleRun(this.again, name, dagRunId, options);
  }

  /** Changes a custom queue's maxConcurrency at once, in both directions; running runs go on. */
  setQueueLimit(queue: string, maxConcurrency: number): void {
    const limits = this.scheduler.view.queueLimits();
    if (!limits.has(queue)) throw new AppError('not_found', `queue ${queue} is not a custom queue`);
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new AppError('bad_request', 'maxConcurrency must be an integer of at least 1');
    this.scheduler.setQueueLimits(new Map(limits).set(queue, maxConcurrency));
    // The limit lives in the configuration, not the store: its event stands alone.
    this.deps.runs.appendEvents([{ type: 'queue.limit_changed', queue, maxConcurrency, at: isoTime(this.clock.now()) }]).catch((error: unknown) => log.warn({ error: errorText(error) }, 'the event of a queue limit change could not be stored'));
  }

  /** Replaces every custom queue's limit (a reloaded configuration); queues left out become DAG queues. */
  setQueueLimits(limits: ReadonlyMap<string, number>): void {
    this.scheduler.setQueueLimits(limits);
  }

  /** A DAG was resumed (or something else the scheduler cannot see changed): its queued runs may go. */
  queuesChanged(): void {
    this.scheduler.poke();
  }

  async stop(name: string, dagRunId: string): Promise<void> {
    const record = this.findRun(name, dagRunId);
    if (!this.isActive(record.name, record.dagRunId)) throw new AppError('not_running', 'DAG is not running');
    this.scheduler.stopRun(record.name, record.dagRunId, this.clock.now());
  }

  /** Runs a finished run again (run-again.ts): the same id as a new attempt, or a new run under `dagRunId`. */
  retry(name: string, dagRunId: string, options: { dagRunId?: string; stepName?: string } = {}, resume?: PriorAttempt): Promise<{ dagRunId: string }> {
    return retryRun(this.again, name, dagRunId, options, resume);
  }

  /** Sets a node's status by hand (0 to 5) on a run that is not active; `record` is the run (or sub run). */
  async setStepStatus(record: RunRecord, stepName: string, status: number): Promise<void> {
    const index = record.nodes.findIndex((node) => node.step.name === stepName);
    if (index < 0) throw new AppError('not_found', `step ${stepName} not found in dag-run ${record.dagRunId}`);
    if (!Number.isInteger(status) || status < NodeStatus.NotStarted || status > NodeStatus.Skipped) {
      throw new AppError('bad_request', 'status must be an integer from 0 to 5');
    }
    if (this.isActive(record.name, record.dagRunId)) throw new AppError('bad_request', `dag-run ${record.dagRunId} is running`);
    if (record.status === RunStatus.Queued) throw new AppError('bad_request', `dag-run ${record.dagRunId} is queued`);
    const nodes = record.nodes.slice();
    nodes[index] = { ...nodes[index], status: status as NodeStatus };
    const changed = { ...record, nodes };
    await this.deps.runs.save(changed, [index], eventsBetween(record, changed, isoTime(this.clock.now())));
  }

  /** Stops every active run of a DAG name; resolves once they have all finished. */
  async stopAll(name: string): Promise<void> {
    const ids = this.scheduler.view.activeIds(name);
    const finished = ids.map((dagRunId) => this.whenFinished(name, dagRunId));
    for (const dagRunId of ids) this.scheduler.stopRun(name, dagRunId, this.clock.now());
    await Promise.all(finished);
  }

  /** Resolves when the run's final state is recorded (at once when it is not active). */
  whenFinished(name: string, dagRunId: string): Promise<void> {
    return this.writes.whenFinished(name, dagRunId, this.isActive(name, dagRunId));
  }

  findSubRun(name: string, dagRunId: string, subDagRunId: string): RunRecord {
    return findSubRun(this.deps.runs, name, dagRunId, subDagRunId);
  }

  subRuns(name: string, dagRunId: string): RunRecord[] {
    return subRunsOf(this.deps.runs, name, dagRunId);
  }

  findRun(name: string, dagRunId: string): RunRecord {
    return findRun(this.deps.runs, name, dagRunId);
  }

  /** findRun for an answer that presents the whole run: a large run is read without holding the event loop. */
  readRun(name: string, dagRunId: string): Promise<RunRecord> {
    return readRun(this.deps.runs, name, dagRunId);
  }

  /**
   * Stops admitting runs (starts, retries, enqueues and inline runs are refused; queued runs stay
   * queued; sub DAG runs of active runs still start) and waits up to `graceMs` for the active runs
   * to finish on their own.
   */
  async drain(graceMs: number): Promise<void> {
    this.scheduler.drain();
    // Runs on workers are not waited for: they go on while this server is away.
    const local = this.activeRuns().filter(({ name, dagRunId }) => !this.remote?.holds(name, dagRunId));
    const finished = Promise.all(local.map(({ name, dagRunId }) => this.whenFinished(name, dagRunId)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise<void>((resolve) => { timer = setTimeout(resolve, Math.max(0, graceMs)); })]);
    clearTimeout(timer);
  }

  /**
   * Stops every active run (their steps get their stop signal), waits for them, stops the
   * scheduler. Runs on workers go on there: the next start of this server takes them back.
   */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      this.scheduler.close();
      const active = this.activeRuns().filter(({ name, dagRunId }) => !this.remote?.holds(name, dagRunId));
      const finished = active.map(({ name, dagRunId }) => this.whenFinished(name, dagRunId));
      for (const { name, dagRunId } of active) this.scheduler.stopRun(name, dagRunId, this.clock.now());
      await Promise.all(finished);
      this.scheduler.stop();
      await this.remote?.close();
      this.writes.close();
    })());
  }
}

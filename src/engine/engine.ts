// The engine facade: start, stop and observe runs. The only way into the actors from outside.
import { createActor, type Actor } from 'xstate';
import {
  AppError, MASK, runKey, NodeStatus, RunStatus, dagNameProblem, dagRunIdProblem, systemClock, uuidv7,
  type Clock, type Dag, type RunRecord,
} from '../core/index.ts';
import { fieldsNotRunYet, mergeParams, paramsFromRequest } from '../definition/index.ts';
import { startingParams, rerunSelection, type PriorAttempt, executeStepOn, type SubDagRunner, runMachine, runServices, stepMachine } from '../actors/index.ts';
import { Definitions, usableDag } from '../catalog/index.ts';
import { StatusEvents, type EngineListener } from './engine-events.ts';
import {
  ChildRuns, RunStarter, Queueing, type EnqueueOptions, type QueueListing, settleInterrupted, schedulerMachine, customQueueBusy, type EngineDeps, type InlineOptions, type StartOptions,
} from '../scheduler/index.ts';
import { findRun, findSubRun, subRunsOf } from './run-lookup.ts';
import { RunWrites } from './run-writes.ts';
import { errorText, log } from '../logging/index.ts';

export type { EngineDeps, InlineOptions, StartOptions };

export class Engine {
  private readonly scheduler: Actor<typeof schedulerMachine>;
  private readonly events = new StatusEvents();
  private readonly clock: Clock;
  private readonly writes: RunWrites;
  private readonly starter: RunStarter;
  private readonly childRuns: ChildRuns;
  private readonly queueing: Queueing;
  /** Stored DAGs and definitions to check, parsed without holding the event loop. */
  readonly definitions: Definitions;
  /** Set by close: no run starts, not even a sub DAG run. */
  private closed: Promise<void> | undefined;
  /** Set by drain: no new runs are admitted, queued runs stay queued, the active ones run on. */
  private draining = false;

  constructor(private readonly deps: EngineDeps) {
    this.clock = deps.clock ?? systemClock;
    this.definitions = new Definitions(deps.dags, deps.parser);
    const onStoreError = deps.onStoreError ?? ((error) => log.error({ error: errorText(error) }, 'store write failed'));
    this.writes = new RunWrites(deps.runs, deps.logs, onStoreError);
    const subDags: SubDagRunner = {
      start: (call, child) => this.childRuns.start(call, child),
      stop: (name, dagRunId) => {
        if (this.isActive(name, dagRunId)) this.scheduler.send({ type: 'run.stop', name, dagRunId, at: this.clock.now() });
      },
    };
    const executeStep = executeStepOn(deps.dispatcher, this.clock, subDags);
    const services = runServices(deps.dispatcher, deps.logs, () => this.clock.now());
    const run = runMachine.provide({
      actors: { step: stepMachine.provide({ actors: { executeStep } }), prepareServices: services.prepareServices, releaseServices: services.releaseServices },
      actions: {
        persist: (_, { record, changed }) => {
          this.writes.persist(record, changed);
          this.events.observe(record, changed);
        },
        appendLog: (_, { path, line }) => deps.logs.appendRunLog(path, line),
        mailRunEnd: services.mailRunEnd,
        mailStepError: services.mailStepError,
      },
    });
    const scheduler = schedulerMachine.provide({
      actors: { run },
      actions: {
        announceFinished: (_, { name, dagRunId, log }) => this.writes.finished(name, dagRunId, log),
        // Started outside the scheduler's step: the start sends the scheduler events of its own.
        startQueued: (_, { run: queued }) => queueMicrotask(() => this.queueing.start(queued)),
      },
    });
    const input = {
      queueLimits: deps.queueLimits ?? new Map<string, number>(),
      isSuspended: (fileName: string) => deps.runs.isSuspended(fileName),
      paused: deps.commandOnly === true,
    };
    this.scheduler = createActor(scheduler, { input, ...(deps.timers ? { clock: deps.timers } : {}) });
    const host = {
      deps, scheduler: this.scheduler, clock: this.clock, definitions: this.definitions, onStoreError,
      announce: (record: RunRecord) => this.events.announce(record),
      isActive: (name: string, dagRunId: string) => this.isActive(name, dagRunId),
      shuttingDown: () => ({ closed: this.closed !== undefined, draining: this.draining }),
    };
    this.starter = new RunStarter(host);
    this.childRuns = new ChildRuns({ ...host, starter: this.starter, whenFinished: (name, dagRunId) => this.whenFinished(name, dagRunId) });
    this.queueing = new Queueing({ ...host, starter: this.starter });
  }

  /** Starts the scheduler, closes runs a previous process left active and queues its queued runs again. */
  async start(): Promise<void> {
    this.scheduler.start();
    const { runs, logs, queue } = this.deps;
    if (!this.deps.commandOnly) {
      await settleInterrupted({
        runs, logs, definitions: this.definitions, now: this.clock.now(),
        isActive: (name, dagRunId) => this.isActive(name, dagRunId) || queue.find(name, dagRunId) !== undefined,
        resume: (attempt) => this.retry(attempt.record.name, attempt.record.dagRunId, {}, attempt),
      });
    }
    await this.queueing.restore();
  }

  subscribe(listener: EngineListener): () => void {
    return this.events.subscribe(listener);
  }

  isActive(name: string, dagRunId: string): boolean {
    return this.scheduler.getSnapshot().context.active.get(name)?.includes(dagRunId) ?? false;
  }

  activeRuns(): Array<{ name: string; dagRunId: string }> {
    return [...this.scheduler.getSnapshot().context.active].flatMap(([name, ids]) => ids.map((dagRunId) => ({ name, dagRunId })));
  }

  async startDag(fileName: string, options: StartOptions): Promise<{ dagRunId: string }> {
    const { dag, text } = await this.storedDag(fileName);
    return this.starter.launch(dag, text, options, 'start', fileName);
  }

  async startInline(options: InlineOptions): Promise<{ dagRunId: string }> {
    const dag = await this.inlineDag(options);
    return this.starter.launch(dag, options.spec, { ...options, dagName: undefined }, 'inline');
  }

  /** A run of a stored DAG waits in its queue (the DAG's `queue`, its own, or `options.queue`). */
  async enqueueDag(fileName: string, options: EnqueueOptions): Promise<{ dagRunId: string }> {
    const { dag, text } = await this.storedDag(fileName);
    return this.queueing.enqueue(dag, text, options, fileName);
  }

  async enqueueInline(options: InlineOptions & { queue?: string }): Promise<{ dagRunId: string }> {
    const dag = await this.inlineDag(options);
    return this.queueing.enqueue(dag, options.spec, { ...options, dagName: undefined });
  }

  /** Takes a queued run out of its queue, recorded aborted; 404 when it is not queued. */
  dequeue(name: string, runId: string): Promise<void> {
    // `latest` names the DAG's newest run, as in every run path.
    return this.queueing.dequeue(name, this.queueing.holds(name, runId) ? runId : this.findRun(name, runId).dagRunId);
  }

  /** The queues as `GET /queues` lists them; `only` that one (none when it has nothing to show). */
  queues(only?: string): QueueListing[] {
    return this.queueing.list(only);
  }

  /**
   * A new run of a finished one (docs/api.md, Reschedule), with its stored definition and params,
   * always as a singleton. It starts at once, or waits when its DAG's custom queue is full.
   */
  async reschedule(name: string, dagRunId: string, options: { dagRunId?: string; dagName?: string } = {}): Promise<{ dagRunId: string; queued: boolean }> {
    const prior = this.findRun(name, dagRunId);
    if (prior.parentDAGRunId && prior.params.includes(MASK)) {
      throw new AppError('bad_request', `dag-run ${prior.dagRunId} got a secret of its parent in its params, which is not stored: reschedule the parent dag-run ${prior.parentDAGRunId}`);
    }
    const specText = this.deps.runs.getSpec(prior.name, prior.dagRunId);
    if (specText === undefined) throw new AppError('not_found', `no definition stored for dag-run ${prior.dagRunId}`);
    const dag = usableDag(await this.definitions.parse(specText, { nameOverride: prior.name, fileName: prior.fileName }));
    const start = { params: prior.params, dagRunId: options.dagRunId || undefined, dagName: options.dagName ?? prior.name, singleton: true };
    if (customQueueBusy(this.scheduler.getSnapshot().context, dag.queue ?? start.dagName)) return { ...(await this.queueing.enqueue(dag, specText, start, prior.fileName)), queued: true };
    return { ...(await this.starter.launch(dag, specText, start, 'inline', prior.fileName)), queued: false };
  }

  /** Changes a custom queue's maxConcurrency at once, in both directions; running runs go on. */
  setQueueLimit(queue: string, maxConcurrency: number): void {
    const limits = this.scheduler.getSnapshot().context.queueLimits;
    if (!limits.has(queue)) throw new AppError('not_found', `queue ${queue} is not a custom queue`);
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new AppError('bad_request', 'maxConcurrency must be an integer of at least 1');
    this.scheduler.send({ type: 'queue.limits', limits: new Map(limits).set(queue, maxConcurrency) });
  }

  /** Replaces every custom queue's limit (a reloaded configuration); queues left out become DAG queues. */
  setQueueLimits(limits: ReadonlyMap<string, number>): void {
    this.scheduler.send({ type: 'queue.limits', limits });
  }

  /** A DAG was resumed (or something else the scheduler cannot see changed): its queued runs may go. */
  queuesChanged(): void {
    this.scheduler.send({ type: 'queue.poke' });
  }

  async stop(name: string, dagRunId: string): Promise<void> {
    const record = this.findRun(name, dagRunId);
    if (!this.isActive(record.name, record.dagRunId)) throw new AppError('not_running', 'DAG is not running');
    this.scheduler.send({ type: 'run.stop', name: record.name, dagRunId: record.dagRunId, at: this.clock.now() });
  }

  /**
   * Runs a finished run again (docs/api.md, Retry): the same id as a new attempt, or a new run under
   * `dagRunId` when it differs. Failed, aborted and unfinished nodes and everything downstream of
   * them run again, the others keep their results; `stepName` runs that one step alone.
   */
  async retry(name: string, dagRunId: string, options: { dagRunId?: string; stepName?: string } = {}, resume?: PriorAttempt): Promise<{ dagRunId: string }> {
    if (this.draining) throw new AppError('internal_error', 'the server is shutting down');
    const reserved = this.starter.reserved;
    const found = this.findRun(name, dagRunId);
    const priorKey = runKey(found.name, found.dagRunId);
    const refuseRunning = () => {
      if (this.isActive(found.name, found.dagRunId) || reserved.has(priorKey)) {
        throw new AppError('already_running', `dag-run ${found.dagRunId} of DAG ${found.name} is running`);
      }
    };
    refuseRunning();
    // Its params held its parent's secret, which was recorded masked: a retry would pass the mask on.
    if (found.parentDAGRunId && found.params.includes(MASK)) {
      throw new AppError('bad_request', `dag-run ${found.dagRunId} got a secret of its parent in its params, which is not stored: retry the parent dag-run ${found.parentDAGRunId}`);
    }
    const specText = this.deps.runs.getSpec(found.name, found.dagRunId);
    if (specText === undefined) throw new AppError('not_found', `no definition stored for dag-run ${found.dagRunId}`);
    const parsed = await this.definitions.parse(specText, { nameOverride: found.name, fileName: found.fileName });
    // From here to the reservation nothing awaits: the checks run again on the run as it is now.
    refuseRunning();
    const prior = this.findRun(found.name, found.dagRunId);
    if (prior.status === RunStatus.Queued) throw new AppError('already_running', `dag-run ${prior.dagRunId} of DAG ${prior.name} is queued`);
    const dag = usableDag(parsed);
    const notRunYet = fieldsNotRunYet(dag);
    if (notRunYet.length > 0) throw new AppError('bad_request', `troupe does not run these fields yet: ${notRunYet.join(', ')}`);
    const targetId = options.dagRunId && options.dagRunId !== prior.dagRunId ? options.dagRunId : prior.dagRunId;
    const idProblem = dagRunIdProblem(targetId);
    if (idProblem) throw new AppError('bad_request', idProblem);
    const key = runKey(prior.name, targetId);
    if (targetId !== prior.dagRunId) this.starter.refuseTaken(prior.name, targetId);
    // `resume`: an attempt a crash interrupted goes on as recovery.ts chose.
    const attempt = resume ?? { record: prior, rerun: rerunSelection(dag, prior, options.stepName) };
    const queue = dag.queue ?? prior.name;
    // maxActiveRuns holds a retry back as it does a start; a sub DAG run's (as its parent's start
    // does not wait for it) and a run resumed after a crash (admitted before) are not counted.
    const holdsSlot = !resume && !prior.parentDAGRunId;
    if (holdsSlot) this.starter.reserveSlot(prior.name, targetId, dag.maxActiveRuns, queue);
    reserved.add(key);
    if (key !== priorKey) reserved.add(priorKey);
    // The run's own params, as they were: nothing of them runs again as a command.
    const seed = {
      dag, name: prior.name, dagRunId: targetId, specText, fileName: prior.fileName, queue, reservedSlot: holdsSlot,
      params: async () => mergeParams(dag.params, paramsFromRequest(prior.params)),
      prior: attempt,
    };
    try {
      return await this.starter.startAttempt(seed);
    } finally {
      reserved.delete(key);
      reserved.delete(priorKey);
      if (seed.reservedSlot) this.starter.releaseSlot(prior.name, targetId);
    }
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
    await this.deps.runs.save({ ...record, nodes });
  }

  /** Stops every active run of a DAG name; resolves once they have all finished. */
  async stopAll(name: string): Promise<void> {
    const ids = this.scheduler.getSnapshot().context.active.get(name) ?? [];
    const finished = ids.map((dagRunId) => this.whenFinished(name, dagRunId));
    for (const dagRunId of ids) this.scheduler.send({ type: 'run.stop', name, dagRunId, at: this.clock.now() });
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

  /**
   * Stops admitting runs (starts, retries, enqueues and inline runs are refused; queued runs stay
   * queued; sub DAG runs of active runs still start) and waits up to `graceMs` for the active runs
   * to finish on their own.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    this.scheduler.send({ type: 'queue.pause' });
    const finished = Promise.all(this.activeRuns().map(({ name, dagRunId }) => this.whenFinished(name, dagRunId)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise<void>((resolve) => { timer = setTimeout(resolve, Math.max(0, graceMs)); })]);
    clearTimeout(timer);
  }

  /** Stops every active run (their steps get their stop signal), waits for them, stops the scheduler. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      this.draining = true;
      this.scheduler.send({ type: 'queue.pause' });
      const active = this.activeRuns();
      const finished = active.map(({ name, dagRunId }) => this.whenFinished(name, dagRunId));
      for (const { name, dagRunId } of active) this.scheduler.send({ type: 'run.stop', name, dagRunId, at: this.clock.now() });
      await Promise.all(finished);
      this.scheduler.stop();
      this.writes.close();
    })());
  }

  private async storedDag(fileName: string): Promise<{ dag: Dag; text: string }> {
    const loaded = await this.definitions.loadDag(fileName);
    if (!loaded) throw new AppError('not_found', `DAG ${fileName} not found`);
    return { dag: usableDag(loaded.result, await this.definitions.callCycles(fileName, loaded.result)), text: loaded.text };
  }

  private async inlineDag(options: InlineOptions): Promise<Dag> {
    if (typeof options.spec !== 'string' || options.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
    if (options.name !== undefined) {
      const problem = dagNameProblem(options.name);
      if (problem) throw new AppError('bad_request', problem);
    }
    const result = await this.definitions.parse(options.spec, { nameOverride: options.name, defaultName: '' });
    if (result.dag && result.dag.name === '' && options.name === undefined) throw new AppError('bad_request', 'DAG name is required');
    return usableDag(result, await this.definitions.callCycles(undefined, result));
  }
}

// Starting runs: a start's admission (name, id, singleton, maxActiveRuns, decided with no await
// between check and reservation), then one attempt of the run: variables, params, plan, first
// record and the run actor. Starts, retries, queued runs and sub DAG runs all end here.
import type { Actor } from 'xstate';
import {
  AppError, runKey, attemptId as newAttemptId, dagNameProblem, dagRunIdProblem, uuidv7,
  type Clock, type Dag, type ParamDef, type RunRecord,
} from '../core/index.ts';
import { fieldsNotRunYet, paramsFromRequest } from '../definition/index.ts';
import type { EngineDeps, StartOptions } from './start-options.ts';
import { planRun, runScope } from '../actors/index.ts';
import { attemptRecord, type Lineage, type PriorAttempt } from '../actors/index.ts';
import { commandRunner, evaluateEnvWithCommands, startingParams, type StartingParams } from '../actors/index.ts';
import { unmetDagPrecondition } from '../actors/index.ts';
import { loadRunVariables } from '../actors/index.ts';
import { ancestry } from '../actors/index.ts';
import { admissionError } from './admission.ts';
import { admittedCount, queuedCount } from './slots.ts';
import type { schedulerMachine } from './scheduler.machine.ts';

export interface AttemptSeed {
  dag: Dag;
  name: string;
  dagRunId: string;
  specText: string;
  fileName?: string;
  /** The run's params, given what its defaults see (the DAG's env on top) and a way to run backtick commands. */
  params: StartingParams;
  prior?: PriorAttempt;
  lineage?: Lineage;
  /** A sub DAG run's: the values its parent masks. */
  inheritedSecrets?: readonly string[];
  /** The start holds a slot of the scheduler's (counted against maxActiveRuns) until its run is admitted. */
  reservedSlot?: boolean;
  /** The queue the run counts against once admitted (a start's or a retry's: its DAG's queue). */
  queue?: string;
  /** A queued run starting: its queued record, whose item leaves the queue as the run starts. */
  queued?: RunRecord;
  /** Set when whoever waits for the start gave up on it: it must not begin after all. */
  abandoned?: string;
}

export interface StarterHost {
  deps: EngineDeps;
  scheduler: Actor<typeof schedulerMachine>;
  clock: Clock;
  isActive(name: string, dagRunId: string): boolean;
  /** Tells subscribers of a run's status as it is admitted (engine-events.ts). */
  announce(record: RunRecord): void;
  /** Closing: no run starts. Draining: only sub DAG runs of active runs start. */
  shuttingDown(): { closed: boolean; draining: boolean };
}

export class RunStarter {
  /**
   * Runs (name and id) being started and not yet handed to the scheduler: a second start of one is
   * refused. Not the scheduler's per-name count of reserved slots: retries and sub DAG runs are here too.
   */
  readonly reserved = new Set<string>();

  constructor(private readonly host: StarterHost) {}

  /** The run's name and id for a start or an enqueue, both validated. */
  identity(dag: Dag, options: StartOptions): { name: string; dagRunId: string } {
    const name = options.dagName ?? dag.name;
    const nameProblem = dagNameProblem(name);
    if (nameProblem) throw new AppError('bad_request', nameProblem);
    const dagRunId = options.dagRunId ?? uuidv7(this.host.clock.now());
    const idProblem = dagRunIdProblem(dagRunId);
    if (idProblem) throw new AppError('bad_request', idProblem);
    const notRunYet = fieldsNotRunYet(dag);
    if (notRunYet.length > 0) throw new AppError('bad_request', `troupe does not run these fields yet: ${notRunYet.join(', ')}`);
    return { name, dagRunId };
  }

  /**
   * Refuses a run whose id is taken: being started, active, stored, or queued. The queue store's
   * items count from the call: a queued record is not stored until its write commits.
   */
  refuseTaken(name: string, dagRunId: string): void {
    const { deps } = this.host;
    if (this.reserved.has(runKey(name, dagRunId)) || this.host.isActive(name, dagRunId) || deps.queue.find(name, dagRunId) || deps.runs.get(name, dagRunId)) {
      throw new AppError('already_exists', `dag-run ID ${dagRunId} already exists for DAG ${name}`);
    }
  }

  /**
   * A retry holds a slot as a start does: refused (409 max_run_reached) when its DAG has
   * maxActiveRuns active already, else reserved until its run is admitted. Call with no await
   * between the checks before it and the reservation.
   */
  reserveSlot(name: string, dagRunId: string, maxActiveRuns: number, queue: string): void {
    const context = this.host.scheduler.getSnapshot().context;
    const refused = admissionError({ name, maxActiveRuns, singleton: false, kind: 'start', active: admittedCount(context, name), queued: queuedCount(context, name) });
    if (refused) throw refused;
    this.host.scheduler.send({ type: 'run.reserve', name, dagRunId, queue });
  }

  releaseSlot(name: string, dagRunId: string): void {
    this.host.scheduler.send({ type: 'run.release', name, dagRunId });
  }

  async launch(dag: Dag, specText: string, options: StartOptions, kind: 'start' | 'inline', fileName?: string): Promise<{ dagRunId: string }> {
    if (this.host.shuttingDown().draining) throw new AppError('internal_error', 'the server is shutting down');
    const { name, dagRunId } = this.identity(dag, options);
    const requested = paramsFromRequest(options.params ?? '');

    // From here to the reservation nothing awaits: checks and reservation are one atomic step.
    const key = runKey(name, dagRunId);
    this.refuseTaken(name, dagRunId);
    const context = this.host.scheduler.getSnapshot().context;
    const refused = admissionError({
      name, maxActiveRuns: dag.maxActiveRuns, singleton: options.singleton === true, kind,
      active: admittedCount(context, name), queued: queuedCount(context, name),
    });
    if (refused) throw refused;
    const queue = dag.queue ?? name;
    // The slot is the scheduler's from here; the run actor takes it over when it is admitted.
    this.host.scheduler.send({ type: 'run.reserve', name, dagRunId, queue });
    this.reserved.add(key);
    const seed: AttemptSeed = { dag, name, dagRunId, specText, fileName, reservedSlot: true, queue, params: startingParams(dag.params, requested) };
    try {
      // Reserved first: a refused start runs none of the definition's commands.
      return await this.startAttempt(seed);
    } finally {
      this.reserved.delete(key);
      if (seed.reservedSlot) this.host.scheduler.send({ type: 'run.release', name, dagRunId });
    }
  }

  /**
   * One attempt of a run, its name and id reserved: variables, params, plan and first record, the
   * DAG's preconditions, then the run actor. A retry passes the earlier attempt (`prior`): the
   * nodes it keeps, and the outputs those produced.
   */
  async startAttempt(seed: AttemptSeed, attemptId = newAttemptId()): Promise<{ dagRunId: string }> {
    const { deps, clock, scheduler } = this.host;
    const { dag, name, dagRunId } = seed;
    const variables = loadRunVariables(dag, deps.dags.dir, deps.processEnv ?? process.env);
    const runCommand = commandRunner(deps.dispatcher, dag.workingDir, dag.shell, dag.maxOutputSize);
    const logPath = deps.logs.runLogPath(name, dagRunId, attemptId, dag.logDir);
    // The DAG's env first and without the params, then the param defaults, which see it (as in Dagu).
    const secrets = { values: seed.inheritedSecrets ?? [], shell: dag.shell };
    const scope = runScope({ dag, name, dagRunId, systemEnv: deps.systemEnv, variables, logPath });
    const dagEnv = await evaluateEnvWithCommands(dag.env, scope, runCommand, secrets);
    const params = await seed.params({ ...scope, ...dagEnv }, runCommand, secrets);
    try {
      deps.logs.prepare(name, dag.logDir);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('internal_error', `cannot create the log directory of DAG ${name}: ${(error as Error).message}`);
    }
    const root = seed.lineage?.root ?? { name, dagRunId };
    // A retried sub DAG run learns its callers from the records above it, which are durable by then.
    const callers = seed.lineage?.callers ?? (seed.prior?.record.parentDAGRunId
      ? ancestry((runName, id) => deps.runs.get(runName, id), { name: seed.prior.record.parentDAGRunName, dagRunId: seed.prior.record.parentDAGRunId })
      : []);
    const plan = planRun({ dag, name, dagRunId, attemptId, params, systemEnv: deps.systemEnv, logs: deps.logs, variables, dagEnv, specText: seed.specText, root, callers, inheritedSecrets: seed.inheritedSecrets });
    const record = attemptRecord({ dag, plan, params, now: clock.now(), fileName: seed.fileName, lineage: seed.lineage, prior: seed.prior, queued: seed.queued });
    // A DAG-level precondition that does not hold aborts the run before its steps; the exit
    // handler still runs (docs/api.md, Handlers): the run actor takes it from there.
    const unmet = await unmetDagPrecondition(dag, plan, deps.dispatcher);
    // The awaits above leave room for a shutdown to begin: such a run is refused, never half-started.
    // While draining, a sub DAG run of an active run still starts: its caller may finish in time.
    const { closed, draining } = this.host.shuttingDown();
    if (closed || (draining && !seed.lineage)) throw new AppError('internal_error', 'the server is shutting down');
    if (seed.abandoned) throw new AppError('internal_error', seed.abandoned);
    // The first record is durable before the caller hears the id; the actor's writes follow in order.
    // A queued run's replaces its queued one as its item leaves the queue, in one transaction.
    const saved = seed.queued ? deps.queue.dispatch(record).then(() => undefined) : deps.runs.save(record);
    // Committed with the first record (writes of a tick share a transaction): its failure is the record's.
    if (!seed.queued) deps.runs.saveSpec(name, dagRunId, seed.specText).catch(() => undefined);
    // Subscribers hear the run start as it is admitted (its actor writes when its first step starts).
    this.host.announce(record);
    // Admitted in one step: a start's reserved slot becomes the active run, never both at once.
    scheduler.send({ type: 'run.admit', input: { record, plan, ...(unmet ? { unmet } : {}) }, reserved: seed.reservedSlot === true, queue: seed.queue });
    seed.reservedSlot = false;
    try {
      await saved;
    } catch (error) {
      // Admitted already, so that its first steps start while the record commits: it is stopped
      // and recorded aborted, written again until the store takes it (run-writes.ts). The caller
      // hears that the run did not start.
      scheduler.send({ type: 'run.stop', name, dagRunId, at: clock.now() });
      const reason = error instanceof Error ? error.message : String(error);
      throw new AppError(error instanceof AppError ? error.code : 'internal_error', `dag-run ${dagRunId} of DAG ${name} was stopped as it started: ${reason}`);
    }
    return { dagRunId };
  }
}

// Starting runs: a start asks the scheduler for its slot (admission.ts decides), then one attempt
// of the run: variables, params, plan, first record, and its beginning on the slot. Starts,
// retries, queued runs and sub DAG runs all end here.
import {
  AppError, attemptId as newAttemptId, dagNameProblem, dagRunIdProblem, markStage, uuidv7,
  type Clock, type Dag, type EventBody, type RunRecord,
} from '../core/index.ts';
import { runProblems, paramsFromRequest } from '../definition/index.ts';
import {
  ancestry, attemptRecord, commandRunner, evaluateEnvWithCommands, loadRunVariables, planRun, runScope, startingParams, unmetDagPrecondition,
  type CallerTrace, type Lineage, type PriorAttempt, type StartingParams,
} from '../actors/index.ts';
import type { AdmissionAsk } from './admission.ts';
import type { Scheduler } from './scheduler.ts';
import type { Slot } from './slots.ts';
import type { EngineDeps, StartOptions } from './start-options.ts';

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
  /** The slot the scheduler admitted the run with: handed back as the run begins, or gives up. */
  slot: Slot;
  /** A queued run starting: its queued record, whose item leaves the queue as the run starts. */
  queued?: RunRecord;
  /** Set as the run begins on its slot: from then on, it has started. */
  begun?: boolean;
  /** Set when whoever waits for the start gave up on it: it must not begin after all. */
  abandoned?: string;
  /** The span above the run's: its caller's, or its calling step's (trace-plan.ts). */
  trace?: { caller?: CallerTrace; traceParent?: string };
}

export interface StarterHost {
  deps: EngineDeps;
  scheduler: Scheduler;
  clock: Clock;
  /** Tells subscribers of a run's status as it is admitted (engine-events.ts). */
  /** The events of a run's status change outside its actor, to store with its record. */
  eventsOf(record: RunRecord): EventBody[];
}

export class RunStarter {
  constructor(private readonly host: StarterHost) {}

  /** The run's name and id for a start or an enqueue, both validated. */
  identity(dag: Dag, options: StartOptions): { name: string; dagRunId: string } {
    const name = options.dagName ?? dag.name;
    const nameProblem = dagNameProblem(name);
    if (nameProblem) throw new AppError('bad_request', nameProblem);
    const dagRunId = options.dagRunId ?? uuidv7(this.host.clock.now());
    const idProblem = dagRunIdProblem(dagRunId);
    if (idProblem) throw new AppError('bad_request', idProblem);
    const problems = runProblems(dag);
    if (problems.length > 0) throw new AppError('bad_request', `this DAG cannot run here: ${problems.join('; ')}`);
    return { name, dagRunId };
  }

  /** Asks the scheduler to admit a run; its slot when admitted, else the refusal is thrown. */
  admit(ask: AdmissionAsk): Slot {
    const admission = this.host.scheduler.ask(ask);
    if (admission.outcome === 'refused') throw admission.error;
    if (admission.outcome !== 'admitted') throw new AppError('internal_error', `dag-run ${ask.dagRunId} of DAG ${ask.name} was queued where it should start`);
    return admission.slot;
  }

  /** Starts a run; gives back its id and the DAG name it runs under. */
  async launch(dag: Dag, specText: string, options: StartOptions, kind: 'start' | 'inline', fileName?: string): Promise<{ dagRunId: string; name: string }> {
    const { name, dagRunId } = this.identity(dag, options);
    const requested = paramsFromRequest(options.params ?? '');
    const slot = this.admit({ kind, name, dagRunId, queue: dag.queue ?? name, maxActiveRuns: dag.maxActiveRuns, singleton: options.singleton === true });
    // Admitted first: a refused start runs none of the definition's commands.
    await this.startAttempt({ dag, name, dagRunId, specText, fileName, slot, params: startingParams(dag.params, requested), ...traceSeed(options.traceParent) });
    return { dagRunId, name };
  }

  /**
   * One attempt of a run, its name and id reserved: variables, params, plan and first record, the
   * DAG's preconditions, then the run actor. A retry passes the earlier attempt (`prior`): the
   * nodes it keeps, and the outputs those produced.
   */
  async startAttempt(seed: AttemptSeed, attemptId = newAttemptId()): Promise<{ dagRunId: string }> {
    try {
      return await this.attempt(seed, attemptId);
    } finally {
      // A run that began handed its slot over as it began; one given up elsewhere was handed back there.
      if (!seed.begun && !seed.abandoned) this.host.scheduler.release(seed.slot);
    }
  }

  private async attempt(seed: AttemptSeed, attemptId: string): Promise<{ dagRunId: string }> {
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
    const plan = await planRun({ dag, name, dagRunId, attemptId, params, systemEnv: deps.systemEnv, logs: deps.logs, variables, dagEnv, specText: seed.specText, root, callers, inheritedSecrets: seed.inheritedSecrets,
      trace: { ...(deps.otel ? { fallback: deps.otel } : {}), ...seed.trace } });
    const planned = await attemptRecord({ dag, plan, params, now: clock.now(), fileName: seed.fileName, lineage: seed.lineage, prior: seed.prior, queued: seed.queued });
    // Placed on a worker: its first record says which, so that a server started again finds it there.
    const record = seed.slot.worker ? { ...planned, workerId: seed.slot.worker } : planned;
    // Encoded a slice per turn here, so that the save below, in the scheduler's step, only issues its writes.
    await deps.runs.prepareFirstSave(record);
    // A DAG-level precondition that does not hold aborts the run before its steps; the exit
    // handler still runs (docs/api.md, Handlers): the run actor takes it from there.
    const unmet = await unmetDagPrecondition(dag, plan, deps.dispatcher);
    if (seed.abandoned) throw new AppError('internal_error', seed.abandoned);
    // The awaits above leave room for a shutdown to begin: the scheduler refuses such a run, never half-started.
    let saved: Promise<void> = Promise.resolve();
    const beginning = scheduler.begin(seed.slot, { record, plan, ...(unmet ? { unmet } : {}) }, () => {
      seed.begun = true;
      // Run inside the scheduler's step: a store that throws (a full disk) rejects `saved` instead.
      try {
        // The first record is durable before the caller hears the id; the actor's writes follow in order.
        // A queued run's replaces its queued one as its item leaves the queue, in one transaction.
        const events = this.host.eventsOf(record);
        saved = seed.queued ? deps.queue.dispatch(record, events).then(() => undefined) : deps.runs.save(record, undefined, events);
        // Committed with the first record (writes of a tick share a transaction): its failure is the record's.
        if (!seed.queued) deps.runs.saveSpec(name, dagRunId, seed.specText).catch(() => undefined);
      } catch (error) {
        saved = Promise.reject(error);
      }
    });
    if (!beginning.begun) throw beginning.error;
    markStage('run.admitted');
    try {
      await saved;
      markStage('record.first.durable');
    } catch (error) {
      // Admitted already, so that its first steps start while the record commits: it is stopped
      // and recorded aborted, written again until the store takes it (run-writes.ts). The caller
      // hears that the run did not start.
      scheduler.stopRun(name, dagRunId, clock.now());
      const reason = error instanceof Error ? error.message : String(error);
      throw new AppError(error instanceof AppError ? error.code : 'internal_error', `dag-run ${dagRunId} of DAG ${name} was stopped as it started: ${reason}`);
    }
    return { dagRunId };
  }
}

/** A start's seed field for the caller's traceparent, when it sent one. */
export function traceSeed(traceParent: string | undefined): Pick<AttemptSeed, 'trace'> {
  return traceParent ? { trace: { traceParent } } : {};
}

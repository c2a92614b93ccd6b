// The engine facade: start, stop and observe runs. The only way into the actors from outside.
import { createActor, type Actor } from 'xstate';
import {
  AppError, MASK, NodeStatus, attemptId as newAttemptId, dagNameProblem, dagRunIdProblem, systemClock, uuidv7,
  type Clock, type Dag, type DagStore, type LogStore, type ParamDef, type RunRecord, type RunStore, type StepDispatcher,
} from '../core/index.ts';
import { fieldsNotRunYet, mergeParams, paramsFromRequest, type DefinitionParser } from '../spec/index.ts';
import { Definitions } from './definitions.ts';
import { usableDag } from './usable-dag.ts';
import { StatusEvents, type EngineListener } from './engine-events.ts';
import { planRun, positionalParams, runScope } from './run/plan.ts';
import { attemptRecord, rerunSelection, type Lineage, type PriorAttempt } from './run/attempt.ts';
import { commandRunner, evaluateEnvWithCommands, paramDefaultsWithCommands, type RunCommand } from './run/substitution.ts';
import { unmetDagPrecondition } from './run/conditions.ts';
import { executeStepOn } from './step/execute-step.ts';
import type { SubDagCall, SubDagRunner } from './step/sub-dag.ts';
import { loadRunVariables, type RunVariables } from './run/variables.ts';
import { ancestry, MAX_SUB_DAG_DEPTH, nestingProblem } from './run/nesting.ts';
import { runMachine } from './run/run.machine.ts';
import { admissionError } from './scheduler/admission.ts';
import { settleInterrupted } from './scheduler/recovery.ts';
import { admittedCount, schedulerMachine } from './scheduler/scheduler.machine.ts';
import { stepMachine } from './step/step.machine.ts';

export interface EngineDeps {
  runs: RunStore;
  dags: DagStore;
  logs: LogStore;
  dispatcher: StepDispatcher;
  /** The server's environment; only the allowed part reaches steps. */
  systemEnv: Record<string, string>;
  /** Where `env` secrets are read from; the server's whole environment by default. */
  processEnv?: Record<string, string | undefined>;
  clock?: Clock;
  /**
   * What the actors' timers (delaySec, timeouts, retry and repeat waits) run on; Node's timers by
   * default. Tests pass XState's SimulatedClock (with `clock` reading the same time) and never sleep.
   */
  timers?: { setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown; clearTimeout(id: unknown): void };
  /** Called when a write to the store fails; the default prints to stderr. */
  onStoreError?: (error: unknown) => void;
  /** Reads definitions, large ones off the main thread; inline by default. */
  parser?: DefinitionParser;
}

export interface StartOptions {
  params?: string;
  dagRunId?: string;
  dagName?: string;
  singleton?: boolean;
}

export interface InlineOptions extends StartOptions {
  spec: string;
  name?: string;
}

export class Engine {
  private readonly scheduler: Actor<typeof schedulerMachine>;
  private readonly events = new StatusEvents();
  private readonly clock: Clock;
  /**
   * Runs (name and id) being started and not yet handed to the scheduler: a second start of one is
   * refused. Not the scheduler's per-name count of reserved slots: retries and sub DAG runs are here too.
   */
  private readonly reserved = new Set<string>();
  private readonly waiters = new Map<string, Array<() => void>>();
  /** The newest write of each active run; a run counts as finished once its final write is durable. */
  private readonly lastWrite = new Map<string, Promise<void>>();
  private readonly finishing = new Map<string, Promise<void>>();
  /** Records waiting for this tick's write, with the nodes they changed: one macrostep's transitions become one write. */
  private readonly unwritten = new Map<string, { record: RunRecord; changed: Set<number> }>();
  /** Stored DAGs and definitions to check, parsed without holding the event loop. */
  readonly definitions: Definitions;
  /** Set by close: no run starts, not even a sub DAG run. */
  private closed: Promise<void> | undefined;
  /** Set by drain: no new runs are admitted, the active ones run on. */
  private draining = false;

  constructor(private readonly deps: EngineDeps) {
    this.clock = deps.clock ?? systemClock;
    this.definitions = new Definitions(deps.dags, deps.parser);
    const onStoreError = deps.onStoreError ?? ((error) => console.error('troupe: store write failed:', error));
    const dispatcher = deps.dispatcher;
    const subDags: SubDagRunner = {
      start: (call, params) => this.startChild(call, params),
      stop: (name, dagRunId) => {
        if (this.isActive(name, dagRunId)) this.scheduler.send({ type: 'run.stop', name, dagRunId, at: this.clock.now() });
      },
    };
    const executeStep = executeStepOn(dispatcher, this.clock, subDags);
    const run = runMachine.provide({
      actors: { step: stepMachine.provide({ actors: { executeStep } }) },
      actions: {
        persist: (_, { record, changed }) => {
          const key = runKey(record.name, record.dagRunId);
          const waiting = this.unwritten.get(key);
          if (waiting) {
            waiting.record = record;
            for (const index of changed) waiting.changed.add(index);
            return;
          }
          this.unwritten.set(key, { record, changed: new Set(changed) });
          // Issued in the same tick as the transitions it carries, ahead of anything they dispatch
          // coming back; LMDB applies writes in call order.
          queueMicrotask(() => {
            const latest = this.unwritten.get(key)!;
            this.unwritten.delete(key);
            this.lastWrite.set(key, deps.runs.save(latest.record, latest.changed).catch(onStoreError));
          });
        },
        appendLog: (_, { path, line }) => deps.logs.appendRunLog(path, line),
      },
    });
    const scheduler = schedulerMachine.provide({
      actors: { run },
      actions: {
        announceFinished: (_, { name, dagRunId, log }) => {
          const key = runKey(name, dagRunId);
          // The final record's write is issued by a microtask queued before this one.
          const durable = Promise.resolve()
            .then(() => {
              const write = this.lastWrite.get(key);
              this.lastWrite.delete(key);
              return write;
            })
            .then(() => deps.logs.closeRunLog(log));
          this.finishing.set(key, durable);
          void durable.then(() => {
            this.finishing.delete(key);
            for (const resolve of this.waiters.get(key) ?? []) resolve();
            this.waiters.delete(key);
          });
        },
      },
    });
    this.scheduler = createActor(scheduler, deps.timers ? { clock: deps.timers } : {});
    this.events.attach(this.scheduler.system);
  }

  /** Starts the scheduler and closes runs a previous process left active. */
  async start(): Promise<void> {
    this.scheduler.start();
    await settleInterrupted({
      runs: this.deps.runs, logs: this.deps.logs, definitions: this.definitions, now: this.clock.now(),
      isActive: (name, dagRunId) => this.isActive(name, dagRunId),
      resume: (attempt) => this.retry(attempt.record.name, attempt.record.dagRunId, {}, attempt),
    });
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
    const loaded = await this.definitions.loadDag(fileName);
    if (!loaded) throw new AppError('not_found', `DAG ${fileName} not found`);
    const dag = usableDag(loaded.result, await this.definitions.callCycles(fileName, loaded.result));
    return this.launch(dag, loaded.text, options, 'start', fileName);
  }

  async startInline(options: InlineOptions): Promise<{ dagRunId: string }> {
    if (typeof options.spec !== 'string' || options.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
    if (options.name !== undefined) {
      const problem = dagNameProblem(options.name);
      if (problem) throw new AppError('bad_request', problem);
    }
    const result = await this.definitions.parse(options.spec, { nameOverride: options.name, defaultName: '' });
    if (result.dag && result.dag.name === '' && options.name === undefined) throw new AppError('bad_request', 'DAG name is required');
    const dag = usableDag(result, await this.definitions.callCycles(undefined, result));
    return this.launch(dag, options.spec, { ...options, dagName: undefined }, 'inline');
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
    const found = this.findRun(name, dagRunId);
    const priorKey = runKey(found.name, found.dagRunId);
    const refuseRunning = () => {
      if (this.isActive(found.name, found.dagRunId) || this.reserved.has(priorKey)) {
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
    const dag = usableDag(parsed);
    const notRunYet = fieldsNotRunYet(dag);
    if (notRunYet.length > 0) throw new AppError('bad_request', `troupe does not run these fields yet: ${notRunYet.join(', ')}`);
    const targetId = options.dagRunId && options.dagRunId !== prior.dagRunId ? options.dagRunId : prior.dagRunId;
    const idProblem = dagRunIdProblem(targetId);
    if (idProblem) throw new AppError('bad_request', idProblem);
    const key = runKey(prior.name, targetId);
    if (targetId !== prior.dagRunId && (this.reserved.has(key) || this.deps.runs.get(prior.name, targetId))) {
      throw new AppError('already_exists', `dag-run ID ${targetId} already exists for DAG ${prior.name}`);
    }
    // `resume`: an attempt a crash interrupted goes on as recovery.ts chose.
    const attempt = resume ?? { record: prior, rerun: rerunSelection(dag, prior, options.stepName) };
    this.reserved.add(key);
    if (key !== priorKey) this.reserved.add(priorKey);
    try {
      // The run's own params, as they were: nothing of them runs again as a command.
      return await this.startAttempt({
        dag, name: prior.name, dagRunId: targetId, specText, fileName: prior.fileName,
        params: async () => mergeParams(dag.params, paramsFromRequest(prior.params)),
        prior: attempt,
      });
    } finally {
      this.reserved.delete(key);
      this.reserved.delete(priorKey);
    }
  }

  /**
   * A sub DAG run for a step of a running run: the target is a local DAG of the caller's file, or a
   * DAG file. It carries its root and parent; maxActiveRuns does not hold it back.
   */
  private async startChild(call: SubDagCall, params: string): Promise<{ dagName: string; dagRunId: string; finished: Promise<RunRecord> }> {
    const target = call.target.replace(/\.ya?ml$/, '');
    const tooDeep = nestingProblem([...call.parent.callers, call.parent.name], target);
    if (tooDeep) throw new AppError('bad_request', tooDeep);
    const local = (await this.definitions.localDags(call.parent.specText)).find((candidate) => candidate.name === target);
    let dag: Dag;
    let specText = call.parent.specText;
    let fileName: string | undefined;
    if (local) {
      if (!local.dag || local.errors.length > 0) throw new AppError('bad_request', `local DAG ${target}: ${local.errors.join('; ')}`);
      dag = local.dag;
    } else {
      const loaded = await this.definitions.loadDag(target);
      if (!loaded) throw new AppError('not_found', `DAG ${target} not found: neither a local DAG of the file nor a DAG file`);
      dag = usableDag(loaded.result);
      specText = loaded.text;
      fileName = target;
    }
    const notRunYet = fieldsNotRunYet(dag);
    if (notRunYet.length > 0) throw new AppError('bad_request', `troupe does not run these fields yet: ${notRunYet.join(', ')}`);
    const dagRunId = uuidv7(this.clock.now());
    const key = runKey(dag.name, dagRunId);
    this.reserved.add(key);
    try {
      await this.startAttempt({
        dag, name: dag.name, dagRunId, specText, fileName, inheritedSecrets: call.parent.secrets,
        params: async (variables, runCommand) => {
          const env = { ...variables.dotenv, ...this.deps.systemEnv, DAG_NAME: dag.name, DAG_RUN_ID: dagRunId };
          return mergeParams(await paramDefaultsWithCommands(dag.params, env, runCommand), paramsFromRequest(params));
        },
        lineage: { root: call.parent.root, parent: { name: call.parent.name, dagRunId: call.parent.dagRunId }, callers: [...call.parent.callers, call.parent.name] },
      });
    } finally {
      this.reserved.delete(key);
    }
    const finished = this.whenFinished(dag.name, dagRunId).then(() => this.deps.runs.get(dag.name, dagRunId)!);
    return { dagName: dag.name, dagRunId, finished };
  }

  /** Sets a node's status by hand (0 to 5) on a run that is not active; `record` is the run (or sub run). */
  async setStepStatus(record: RunRecord, stepName: string, status: number): Promise<void> {
    const index = record.nodes.findIndex((node) => node.step.name === stepName);
    if (index < 0) throw new AppError('not_found', `step ${stepName} not found in dag-run ${record.dagRunId}`);
    if (!Number.isInteger(status) || status < NodeStatus.NotStarted || status > NodeStatus.Skipped) {
      throw new AppError('bad_request', 'status must be an integer from 0 to 5');
    }
    if (this.isActive(record.name, record.dagRunId)) throw new AppError('bad_request', `dag-run ${record.dagRunId} is running`);
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
    const finishing = this.finishing.get(runKey(name, dagRunId));
    if (finishing) return finishing;
    if (!this.isActive(name, dagRunId)) return Promise.resolve();
    return new Promise((resolve) => {
      const key = runKey(name, dagRunId);
      this.waiters.set(key, [...(this.waiters.get(key) ?? []), resolve]);
    });
  }

  /** A sub DAG run of a run (at any depth below it), by its id; 404 when it is not one. */
  findSubRun(name: string, dagRunId: string, subDagRunId: string): RunRecord {
    const search = (record: RunRecord, depth: number): RunRecord | undefined => {
      for (const [childId, childName] of Object.entries(record.children ?? {})) {
        const child = this.deps.runs.get(childName, childId);
        if (!child) continue;
        if (childId === subDagRunId) return child;
        const deeper = depth < MAX_SUB_DAG_DEPTH ? search(child, depth + 1) : undefined;
        if (deeper) return deeper;
      }
      return undefined;
    };
    const found = search(this.findRun(name, dagRunId), 0);
    if (!found) throw new AppError('not_found', `sub dag-run ${subDagRunId} not found for dag-run ${dagRunId}`);
    return found;
  }

  /** The sub DAG runs a run started directly, in the order they started. */
  subRuns(name: string, dagRunId: string): RunRecord[] {
    const record = this.findRun(name, dagRunId);
    return Object.entries(record.children ?? {}).map(([childId, childName]) => this.deps.runs.get(childName, childId)).filter((child): child is RunRecord => child !== undefined);
  }

  /** Looks a run up by name and id, `latest` included; 404 when absent. */
  findRun(name: string, dagRunId: string): RunRecord {
    const record = dagRunId === 'latest' ? this.deps.runs.latest(name) : this.deps.runs.get(name, dagRunId);
    if (!record) {
      throw new AppError('not_found', dagRunId === 'latest' ? `no dag-runs found for DAG ${name}` : `dag-run ID ${dagRunId} not found for DAG ${name}`);
    }
    return record;
  }

  /**
   * Stops admitting runs (starts, retries and inline runs are refused; sub DAG runs of active runs
   * still start) and waits up to `graceMs` for the active runs to finish on their own.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    const finished = Promise.all(this.activeRuns().map(({ name, dagRunId }) => this.whenFinished(name, dagRunId)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise<void>((resolve) => { timer = setTimeout(resolve, Math.max(0, graceMs)); })]);
    clearTimeout(timer);
  }

  /** Stops every active run (their steps get their stop signal), waits for them, stops the scheduler. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      this.draining = true;
      const active = this.activeRuns();
      const finished = active.map(({ name, dagRunId }) => this.whenFinished(name, dagRunId));
      for (const { name, dagRunId } of active) this.scheduler.send({ type: 'run.stop', name, dagRunId, at: this.clock.now() });
      await Promise.all(finished);
      this.scheduler.stop();
    })());
  }

  private async launch(dag: Dag, specText: string, options: StartOptions, kind: 'start' | 'inline', fileName?: string): Promise<{ dagRunId: string }> {
    if (this.draining) throw new AppError('internal_error', 'the server is shutting down');
    const name = options.dagName ?? dag.name;
    const nameProblem = dagNameProblem(name);
    if (nameProblem) throw new AppError('bad_request', nameProblem);
    const dagRunId = options.dagRunId ?? uuidv7(this.clock.now());
    const idProblem = dagRunIdProblem(dagRunId);
    if (idProblem) throw new AppError('bad_request', idProblem);
    const notRunYet = fieldsNotRunYet(dag);
    if (notRunYet.length > 0) throw new AppError('bad_request', `troupe does not run these fields yet: ${notRunYet.join(', ')}`);
    const requested = paramsFromRequest(options.params ?? '');

    // From here to the reservation nothing awaits: checks and reservation are one atomic step.
    const key = runKey(name, dagRunId);
    if (this.reserved.has(key) || this.isActive(name, dagRunId) || this.deps.runs.get(name, dagRunId)) {
      throw new AppError('already_exists', `dag-run ID ${dagRunId} already exists for DAG ${name}`);
    }
    const active = admittedCount(this.scheduler.getSnapshot().context, name);
    const refused = admissionError({ name, maxActiveRuns: dag.maxActiveRuns, singleton: options.singleton === true, active, kind });
    if (refused) throw refused;
    // The slot is the scheduler's from here; the run actor takes it over when it is admitted.
    this.scheduler.send({ type: 'run.reserve', name });
    this.reserved.add(key);
    const seed: AttemptSeed = { dag, name, dagRunId, specText, fileName, reservedSlot: true, params: async (variables, runCommand) => {
      const env = { ...variables.dotenv, ...this.deps.systemEnv, DAG_NAME: name, DAG_RUN_ID: dagRunId };
      return mergeParams(await paramDefaultsWithCommands(dag.params, env, runCommand), requested);
    } };
    try {
      // Reserved first: a refused start runs none of the definition's commands.
      return await this.startAttempt(seed);
    } finally {
      this.reserved.delete(key);
      if (seed.reservedSlot) this.scheduler.send({ type: 'run.release', name });
    }
  }

  /**
   * One attempt of a run, its name and id reserved: variables, params, plan and first record, the
   * DAG's preconditions, then the run actor. A retry passes the earlier attempt (`prior`): the
   * nodes it keeps, and the outputs those produced.
   */
  private async startAttempt(seed: AttemptSeed): Promise<{ dagRunId: string }> {
    const { dag, name, dagRunId } = seed;
    const variables = loadRunVariables(dag, this.deps.dags.dir, this.deps.processEnv ?? process.env);
    const runCommand = commandRunner(this.deps.dispatcher, dag.workingDir, dag.shell, dag.maxOutputSize);
    const params = await seed.params(variables, runCommand);
    const attemptId = newAttemptId();
    try {
      this.deps.logs.prepare(name, dag.logDir);
    } catch (error) {
      throw new AppError('internal_error', `cannot create the log directory of DAG ${name}: ${(error as Error).message}`);
    }
    const logPath = this.deps.logs.runLogPath(name, dagRunId, attemptId, dag.logDir);
    const dagEnv = dag.env.some(([, value]) => value.includes('`'))
      ? await evaluateEnvWithCommands(dag.env, { ...runScope({ dag, name, dagRunId, params, systemEnv: this.deps.systemEnv, variables, logPath }), ...positionalParams(params) }, runCommand, { values: seed.inheritedSecrets ?? [], shell: dag.shell })
      : undefined;
    const root = seed.lineage?.root ?? { name, dagRunId };
    // A retried sub DAG run learns its callers from the records above it, which are durable by then.
    const callers = seed.lineage?.callers ?? (seed.prior?.record.parentDAGRunId
      ? ancestry((runName, id) => this.deps.runs.get(runName, id), { name: seed.prior.record.parentDAGRunName, dagRunId: seed.prior.record.parentDAGRunId })
      : []);
    const plan = planRun({ dag, name, dagRunId, attemptId, params, systemEnv: this.deps.systemEnv, logs: this.deps.logs, variables, dagEnv, specText: seed.specText, root, callers, inheritedSecrets: seed.inheritedSecrets });
    const now = this.clock.now();
    const record = attemptRecord({ dag, plan, params, now, fileName: seed.fileName, lineage: seed.lineage, prior: seed.prior });
    // A DAG-level precondition that does not hold aborts the run before its steps; the exit
    // handler still runs (docs/api.md, Handlers): the run actor takes it from there.
    const unmet = await unmetDagPrecondition(dag, plan, this.deps.dispatcher);
    // The awaits above leave room for a shutdown to begin: such a run is refused, never half-started.
    // While draining, a sub DAG run of an active run still starts: its caller may finish in time.
    if (this.closed || (this.draining && !seed.lineage)) throw new AppError('internal_error', 'the server is shutting down');
    // The first record is durable before the caller hears the id; the actor's writes follow in order.
    const saved = this.deps.runs.save(record);
    void this.deps.runs.saveSpec(name, dagRunId, seed.specText);
    // Admitted in one step: a start's reserved slot becomes the active run, never both at once.
    this.scheduler.send({ type: 'run.admit', input: { record, plan, ...(unmet ? { unmet } : {}) }, reserved: seed.reservedSlot === true });
    seed.reservedSlot = false;
    await saved;
    return { dagRunId };
  }
}

interface AttemptSeed {
  dag: Dag;
  name: string;
  dagRunId: string;
  specText: string;
  fileName?: string;
  /** The run's params, given its variables and a way to run backtick commands. */
  params: (variables: RunVariables, runCommand: RunCommand) => Promise<ParamDef[]>;
  prior?: PriorAttempt;
  lineage?: Lineage;
  /** A sub DAG run's: the values its parent masks. */
  inheritedSecrets?: readonly string[];
  /** The start holds a slot of the scheduler's (counted against maxActiveRuns) until its run is admitted. */
  reservedSlot?: boolean;
}

function runKey(name: string, dagRunId: string): string {
  return `${name}\u0000${dagRunId}`;
}

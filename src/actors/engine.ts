// The engine facade: start, stop and observe runs. The only way into the actors from outside.
import { createActor, type Actor } from 'xstate';
import {
  AppError, HANDLER_NODE_NAMES, NodeStatus, RunStatus, type HandlerKind, type Step, attemptId as newAttemptId, dagNameProblem, dagRunIdProblem, isoTime, systemClock, uuidv7,
  type Clock, type Dag, type DagFile, type DagStore, type LogStore, type NodeRecord, type RunRecord, type RunStore, type StepDispatcher,
} from '../core/index.ts';
import { fieldsNotRunYet, mergeParams, paramsFromRequest, paramsJson, parseDag, stepView, type ParseResult } from '../spec/index.ts';
import { StatusEvents, type EngineListener } from './engine-events.ts';
import { planRun, positionalParams, runScope } from './run/plan.ts';
import { commandProbe, commandRunner, evaluateEnvWithCommands, paramDefaultsWithCommands } from './run/substitution.ts';
import { checkConditions } from './run/conditions.ts';
import { executeStepOn } from './step/execute-step.ts';
import { loadRunVariables } from './run/variables.ts';
import { logLine } from './run/log-line.ts';
import { runMachine } from './run/run.machine.ts';
import { admissionError } from './scheduler/admission.ts';
import { schedulerMachine } from './scheduler/scheduler.machine.ts';
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
  /** Runs admitted but not yet handed to the scheduler: counted by admission, refused as duplicates. */
  private readonly reserved = new Map<string, number>();
  private readonly waiters = new Map<string, Array<() => void>>();
  /** The newest write of each active run; a run counts as finished once its final write is durable. */
  private readonly lastWrite = new Map<string, Promise<void>>();
  private readonly finishing = new Map<string, Promise<void>>();
  /** Records waiting for this tick's write: one macrostep's transitions become one write. */
  private readonly unwritten = new Map<string, RunRecord>();
  private readonly parsed = new Map<string, { text: string; result: ParseResult }>();
  private closing = false;

  constructor(private readonly deps: EngineDeps) {
    this.clock = deps.clock ?? systemClock;
    const onStoreError = deps.onStoreError ?? ((error) => console.error('troupe: store write failed:', error));
    const dispatcher = deps.dispatcher;
    const executeStep = executeStepOn(dispatcher, this.clock);
    const run = runMachine.provide({
      actors: { step: stepMachine.provide({ actors: { executeStep } }) },
      actions: {
        persist: (_, { record }) => {
          const key = runKey(record.name, record.dagRunId);
          const waiting = this.unwritten.has(key);
          this.unwritten.set(key, record);
          if (waiting) return;
          // Issued in the same tick as the transitions it carries, ahead of anything they dispatch
          // coming back; LMDB applies writes in call order.
          queueMicrotask(() => {
            const latest = this.unwritten.get(key)!;
            this.unwritten.delete(key);
            this.lastWrite.set(key, deps.runs.save(latest).catch(onStoreError));
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
    await this.recoverInterrupted();
  }

  subscribe(listener: EngineListener): () => void {
    return this.events.subscribe(listener);
  }

  isActive(name: string, dagRunId: string): boolean {
    return (this.scheduler.getSnapshot().context.active[name] ?? []).includes(dagRunId);
  }

  activeRuns(): Array<{ name: string; dagRunId: string }> {
    return Object.entries(this.scheduler.getSnapshot().context.active).flatMap(([name, ids]) => ids.map((dagRunId) => ({ name, dagRunId })));
  }

  /** Parses a stored DAG, reusing the last result while the file's text is unchanged. */
  async loadDag(fileName: string): Promise<{ dag?: Dag; result: ParseResult; text: string; path: string } | undefined> {
    if (dagNameProblem(fileName)) return undefined;
    const file = await this.deps.dags.read(fileName);
    if (!file) return undefined;
    const result = this.parseStored(file);
    return { dag: result.dag, result, text: file.text, path: file.path };
  }

  /** The parse of a stored DAG file; reused while the file's text is unchanged. */
  parseStored(file: DagFile): ParseResult {
    let cached = this.parsed.get(file.fileName);
    if (!cached || cached.text !== file.text) {
      cached = { text: file.text, result: parseDag(file.text, { fileName: file.fileName, baseDir: this.deps.dags.dir }) };
      this.parsed.set(file.fileName, cached);
    }
    return cached.result;
  }

  async startDag(fileName: string, options: StartOptions): Promise<{ dagRunId: string }> {
    const loaded = await this.loadDag(fileName);
    if (!loaded) throw new AppError('not_found', `DAG ${fileName} not found`);
    const dag = usableDag(loaded.result);
    return this.launch(dag, loaded.text, options, 'start', fileName);
  }

  async startInline(options: InlineOptions): Promise<{ dagRunId: string }> {
    if (typeof options.spec !== 'string' || options.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
    if (options.name !== undefined) {
      const problem = dagNameProblem(options.name);
      if (problem) throw new AppError('bad_request', problem);
    }
    const result = parseDag(options.spec, { nameOverride: options.name, baseDir: this.deps.dags.dir, defaultName: '' });
    if (result.dag && result.dag.name === '' && options.name === undefined) throw new AppError('bad_request', 'DAG name is required');
    const dag = usableDag(result);
    return this.launch(dag, options.spec, { ...options, dagName: undefined }, 'inline');
  }

  async stop(name: string, dagRunId: string): Promise<void> {
    const record = this.findRun(name, dagRunId);
    if (!this.isActive(record.name, record.dagRunId)) throw new AppError('not_running', 'DAG is not running');
    this.scheduler.send({ type: 'run.stop', name: record.name, dagRunId: record.dagRunId, at: this.clock.now() });
  }

  /** Stops every active run of a DAG name; resolves once they have all finished. */
  async stopAll(name: string): Promise<void> {
    const ids = this.scheduler.getSnapshot().context.active[name] ?? [];
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

  /** Looks a run up by name and id, `latest` included; 404 when absent. */
  findRun(name: string, dagRunId: string): RunRecord {
    const record = dagRunId === 'latest' ? this.deps.runs.latest(name) : this.deps.runs.get(name, dagRunId);
    if (!record) {
      throw new AppError('not_found', dagRunId === 'latest' ? `no dag-runs found for DAG ${name}` : `dag-run ID ${dagRunId} not found for DAG ${name}`);
    }
    return record;
  }

  /** Stops every active run (their steps get their stop signal), waits for them, stops the scheduler. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const active = this.activeRuns();
    const finished = active.map(({ name, dagRunId }) => this.whenFinished(name, dagRunId));
    for (const { name, dagRunId } of active) this.scheduler.send({ type: 'run.stop', name, dagRunId, at: this.clock.now() });
    await Promise.all(finished);
    this.scheduler.stop();
  }

  private async launch(dag: Dag, specText: string, options: StartOptions, kind: 'start' | 'inline', fileName?: string): Promise<{ dagRunId: string }> {
    if (this.closing) throw new AppError('internal_error', 'the server is shutting down');
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
    const active = (this.scheduler.getSnapshot().context.active[name]?.length ?? 0) + (this.reservedCount(name));
    const refused = admissionError({ name, maxActiveRuns: dag.maxActiveRuns, singleton: options.singleton === true, active, kind });
    if (refused) throw refused;
    this.reserved.set(key, this.clock.now());
    try {
      // Reserved first: a refused start runs none of the definition's commands.
      const variables = loadRunVariables(dag, this.deps.dags.dir, this.deps.processEnv ?? process.env);
      const runCommand = commandRunner(this.deps.dispatcher, dag.workingDir, dag.shell, dag.maxOutputSize);
      const defaults = await paramDefaultsWithCommands(dag.params, { ...variables.dotenv, ...this.deps.systemEnv, DAG_NAME: name, DAG_RUN_ID: dagRunId }, runCommand);
      const params = mergeParams(defaults, requested);
      const attemptId = newAttemptId();
      try {
        this.deps.logs.prepare(name, dag.logDir);
      } catch (error) {
        throw new AppError('internal_error', `cannot create the log directory of DAG ${name}: ${(error as Error).message}`);
      }
      const logPath = this.deps.logs.runLogPath(name, dagRunId, attemptId, dag.logDir);
      const dagEnv = dag.env.some(([, value]) => value.includes('`'))
        ? await evaluateEnvWithCommands(dag.env, { ...runScope({ dag, name, dagRunId, params, systemEnv: this.deps.systemEnv, variables, logPath }), ...positionalParams(params) }, runCommand)
        : undefined;
      const plan = planRun({ dag, name, dagRunId, attemptId, params, systemEnv: this.deps.systemEnv, logs: this.deps.logs, variables, dagEnv });
      const now = this.clock.now();
      const record: RunRecord = {
        name, dagRunId, attemptId,
        rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
        status: RunStatus.Running, queuedAt: '', startedAt: isoTime(now), finishedAt: '',
        log: plan.logPath, params: paramsJson(params), createdAtMs: now,
        nodes: dag.steps.map((step, index) => newNode(step, plan.steps[index])),
        ...(Object.keys(plan.handlers).length > 0 ? {
          handlers: Object.fromEntries(Object.entries(plan.handlers).map(([kind, planned]) => [
            HANDLER_NODE_NAMES[kind as HandlerKind], newNode(dag.handlerOn[kind as HandlerKind]!, planned!),
          ])),
        } : {}),
        ...(fileName ? { fileName } : {}),
      };
      // The first record is durable before the caller hears the id; the actor's writes follow in order.
      // A DAG-level precondition that does not hold aborts the run before its steps; the exit
      // handler still runs (COMPAT.md): the run actor takes it from there.
      let unmet: string | undefined;
      if (dag.preconditions.length > 0) {
        const probe = commandProbe(this.deps.dispatcher, dag.workingDir, dag.shell, dag.maxOutputSize);
        const verdict = await checkConditions(dag.preconditions, plan.baseEnv, probe);
        if (!verdict.holds) unmet = verdict.message;
      }
      // The awaits above leave room for a shutdown to begin: such a run is refused, never half-started.
      if (this.closing) throw new AppError('internal_error', 'the server is shutting down');
      const saved = this.deps.runs.save(record);
      void this.deps.runs.saveSpec(name, dagRunId, specText);
      this.scheduler.send({ type: 'run.admit', input: { record, plan, ...(unmet ? { unmet } : {}) } });
      await saved;
      return { dagRunId };
    } finally {
      this.reserved.delete(key);
    }
  }

  private reservedCount(name: string): number {
    let count = 0;
    for (const key of this.reserved.keys()) if (key.startsWith(`${name}\u0000`)) count++;
    return count;
  }

  /** Runs recorded active by a process that ended without finishing them are closed as failed. */
  private async recoverInterrupted(): Promise<void> {
    const now = this.clock.now();
    const writes: Promise<void>[] = [];
    for (const status of [RunStatus.Running, RunStatus.Queued]) {
      for (const record of this.deps.runs.list({ status })) {
        if (this.isActive(record.name, record.dagRunId)) continue;
        const message = 'the server stopped while the run was active';
        writes.push(this.deps.runs.save({
          ...record,
          status: RunStatus.Failed,
          finishedAt: isoTime(now),
          error: message,
          nodes: record.nodes.map((node) => node.status === NodeStatus.Running
            ? { ...node, status: NodeStatus.Failed, finishedAt: isoTime(now), error: message }
            : node),
        }));
        this.deps.logs.appendRunLog(record.log, logLine(now, 'ERROR', 'DAG run interrupted', { dag: record.name, 'run-id': record.dagRunId }));
        void this.deps.logs.closeRunLog(record.log);
      }
    }
    await Promise.all(writes);
  }
}

/** A node not started yet, for a step of the definition and its plan. */
function newNode(step: Step, planned: { stdout: string; stderr: string }): NodeRecord {
  return {
    step: stepView(step), stdout: planned.stdout, stderr: planned.stderr,
    startedAt: '', finishedAt: '', status: NodeStatus.NotStarted, retryCount: 0, doneCount: 0, error: '',
    subRuns: [], subRunsRepeated: [],
  };
}

function runKey(name: string, dagRunId: string): string {
  return `${name}\u0000${dagRunId}`;
}

function usableDag(result: ParseResult): Dag {
  if (!result.dag || result.errors.length > 0) {
    throw new AppError('bad_request', result.errors.join('; ') || 'invalid DAG definition', { errors: result.errors });
  }
  return result.dag;
}

// Where an admitted run executes. The scheduler hands each run that begins to a RunDispatcher and
// hears back, through RunReports, everything the run does: each record it writes, its log lines,
// its end. The local dispatcher runs the run actor in this process, its steps on the step pool; a
// dispatcher for workers on other machines sends the run there and relays the same reports.
import { createActor, type Actor } from 'xstate';
import { runKey, type Clock, type RunRecord, type RunSpan, type RunTrace, type StepDispatcher, type Timers, type WorkerView } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import { runMachine, type RunFinishedEvent, type RunInput } from './run/run.machine.ts';
import { runServices } from './run-services.ts';
import { executeStepOn } from './step/execute-step.ts';
import { stepMachine } from './step/step.machine.ts';
import type { SubDagRunner } from './step/sub-dag.ts';

/** What a run's execution tells, in the order it happens. */
export interface RunReports {
  /** A record of the run; `changed`: the nodes it changed since the one before. */
  record(record: RunRecord, changed: readonly number[]): void;
  /** A line of the run log at `path`. */
  logLine(path: string, line: string): void;
  /** The run reached its final state; its final record was reported before. */
  finished(end: RunFinishedEvent): void;
  /** Resolves once the records reported of the run so far are stored (or could not be). */
  stored?(name: string, dagRunId: string): Promise<void>;
  /** A span of a traced run, to export. */
  span?(trace: RunTrace, span: RunSpan): void;
}

export interface RunDispatcher {
  /**
   * Executes an admitted run; it reports through the RunReports the dispatcher was given.
   * `worker`: the worker the scheduler placed it on (distributed dispatch).
   */
  start(run: RunInput, worker?: string): void;
  /** Asks a run to stop (its steps get their stop signal); its end is reported as any end is. Nothing for a run it does not hold. */
  stop(name: string, dagRunId: string, at: number): void;
}

/** Runs on workers of other machines: the scheduler places runs on the workers it lists. */
export interface RemoteRunDispatcher extends RunDispatcher {
  /** The workers as last heard (their heartbeats), for placement. */
  workers(): readonly WorkerView[];
  /** Whether a run of this server runs on a worker now. */
  holds(name: string, dagRunId: string): boolean;
  /**
   * A run the previous process of this server placed on a worker (its record says which), taken
   * back as if this process had handed it: what it reports is applied, its worker's silence settles it.
   */
  adopt(record: RunRecord): void;
  /** Starts hearing the workers and applying what they report (after the runs to adopt are adopted). */
  connect(): Promise<void>;
  close(): Promise<void>;
}

export interface RemotePorts {
  reports: RunReports;
  /** The workers' list changed in a way that may let a waiting run go. */
  workersChanged(): void;
  /**
   * The worker running this run went silent (no heartbeat for the configured time): nothing more
   * of the attempt is applied, and the run is settled as a crash settles it, `reason` naming the worker.
   */
  workerLost(name: string, dagRunId: string, reason: string): void;
}

/** Builds the remote dispatcher on its ports. */
export type RemoteRunsFactory = (ports: RemotePorts) => RemoteRunDispatcher;

export interface LocalRunDeps {
  steps: StepDispatcher;
  reports: RunReports;
  /** Sub DAG runs a step starts: admitted by the scheduler like any run. */
  subDags: SubDagRunner;
  /** What the run's steps and their log lines are stamped with. */
  clock: Clock;
  /** What the run actors' timers run on; Node's by default (tests pass a simulated clock). */
  timers?: Timers;
}

/** Runs execute in this process: one run actor each, its steps on the step pool. */
export class LocalRunDispatcher implements RunDispatcher {
  private readonly running = new Map<string, Actor<typeof runMachine>>();
  private readonly machine;

  constructor(private readonly deps: LocalRunDeps) {
    const { steps, reports } = deps;
    const executeStep = executeStepOn(steps, deps.clock, deps.subDags);
    // Lines about mail that was not sent belong to the run log, as every other line of the run.
    const services = runServices(steps, { appendRunLog: (path, line) => reports.logLine(path, line) }, () => deps.clock.now());
    this.machine = runMachine.provide({
      actors: { step: stepMachine.provide({ actors: { executeStep } }), prepareServices: services.prepareServices, releaseServices: services.releaseServices },
      actions: {
        persist: (_, { record, changed }) => reports.record(record, changed),
        appendLog: (_, { path, line }) => reports.logLine(path, line),
        traceSpan: (_, { trace, span }) => reports.span?.(trace, span),
        mailRunEnd: services.mailRunEnd,
        mailStepError: services.mailStepError,
        finished: (_, end) => {
          this.running.delete(runKey(end.name, end.dagRunId));
          reports.finished(end);
        },
      },
    });
  }

  start(run: RunInput): void {
    const { name, dagRunId } = run.record;
    const actor = createActor(this.machine, { input: run, ...(this.deps.timers ? { clock: this.deps.timers } : {}) });
    this.running.set(runKey(name, dagRunId), actor);
    actor.subscribe({
      // An error in the run's own code: the run cannot go on, and its slot must not stay taken.
      error: (error) => {
        log.error({ dag: name, dagRunId, error: errorText(error) }, 'the run stopped on an internal error');
        if (this.running.delete(runKey(name, dagRunId))) {
          this.deps.reports.finished({ type: 'run.finished', name, dagRunId, status: run.record.status, log: run.record.log });
        }
      },
    });
    actor.start();
  }

  stop(name: string, dagRunId: string, at: number): void {
    this.running.get(runKey(name, dagRunId))?.send({ type: 'run.stop', at });
  }
}

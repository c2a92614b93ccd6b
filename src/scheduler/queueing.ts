// Queued runs: enqueue, dequeue, the start of a run the scheduler dispatched, the queues as the
// API lists them, and the queues a previous process left (restored at start, in their order).
// Decisions (which run waits, which starts, when) are the scheduler actor's, and each queued run's
// definition waits with it there; this writes their records and starts what it dispatches.
import {
  AppError, RunStatus, attemptId as newAttemptId, isFinalRunStatus, isoTime, queueNameProblem, runKey, systemTimers,
  type Clock, type Dag, type EventBody, type RunRecord,
} from '../core/index.ts';
import { mergeParams, paramsFromRequest } from '../definition/index.ts';
import { logLine, queuedRecord, startingParams } from '../actors/index.ts';
import { usableDag, type Definitions } from '../catalog/index.ts';
import type { QueuedRun, WaitReason } from './queue-order.ts';
import { traceSeed, type AttemptSeed, type RunStarter } from './run-starter.ts';
import type { Scheduler } from './scheduler.ts';
import type { Slot } from './slots.ts';
import type { EngineDeps, StartOptions } from './start-options.ts';

export interface EnqueueOptions extends StartOptions {
  /** The queue to wait in, for this run only; the DAG's `queue`, else its own queue, by default. */
  queue?: string;
  /** Refused (409 max_run_reached) while its DAG has a run queued or maxActiveRuns runs active: an inline enqueue. */
  refusedWhenBusy?: boolean;
}

export interface QueueListing {
  name: string;
  type: 'custom' | 'dag-based';
  maxConcurrency?: number;
  running: RunRecord[];
  queued: Array<{ record: RunRecord; waitingFor: WaitReason; workerSelector?: Readonly<Record<string, string>> }>;
  /** How long the oldest queued run has waited; absent when none waits. */
  oldestQueuedAgeMs?: number;
}

export interface QueueingHost {
  deps: EngineDeps;
  scheduler: Scheduler;
  starter: RunStarter;
  clock: Clock;
  definitions: Definitions;
  onStoreError: (error: unknown) => void;
  /** Tells subscribers of a status change no run actor makes (engine-events.ts). */
  /** The events of a run's status change outside its actor, to store with its record. */
  eventsOf: (record: RunRecord) => EventBody[];
}

export class Queueing {
  constructor(private readonly host: QueueingHost) {}

  async enqueue(dag: Dag, specText: string, options: EnqueueOptions, fileName?: string): Promise<{ dagRunId: string }> {
    const { dagRunId } = await this.submit('enqueue', dag, specText, options, fileName);
    return { dagRunId };
  }

  /**
   * A run that waits in its queue (enqueue), or waits only when its DAG's custom queue is busy
   * and starts at once otherwise (reschedule): the scheduler decides which, as it admits it.
   */
  async submit(kind: 'enqueue' | 'reschedule' | 'start' | 'inline', dag: Dag, specText: string, options: EnqueueOptions, fileName?: string): Promise<{ dagRunId: string; queued: boolean }> {
    const { deps, scheduler, starter, clock } = this.host;
    const { name, dagRunId } = starter.identity(dag, options);
    const queue = options.queue || dag.queue || name;
    const queueProblem = queueNameProblem(queue);
    if (queueProblem) throw new AppError('bad_request', queueProblem);
    const requested = paramsFromRequest(options.params ?? '');
    const attemptId = newAttemptId();
    const log = deps.logs.runLogPath(name, dagRunId, attemptId, dag.logDir);
    const queued = queuedRecord({ dag, name, dagRunId, attemptId, log, params: mergeParams(dag.params, requested), now: clock.now(), fileName });
    const record = options.traceParent ? { ...queued, traceParent: options.traceParent } : queued;
    const admission = scheduler.ask({
      kind, name, dagRunId, queue, maxActiveRuns: dag.maxActiveRuns, singleton: options.singleton === true, fileName,
      ...(options.refusedWhenBusy ? { refusedWhenBusy: true } : {}),
      start: { dag, specText, params: options.params, fileName, record }, ...selectorOf(dag),
    });
    if (admission.outcome === 'refused') throw admission.error;
    if (admission.outcome === 'admitted') {
      const seed = { dag, name, dagRunId, specText, fileName, slot: admission.slot, params: startingParams(dag.params, requested), ...traceSeed(options.traceParent) };
      return { ...(await starter.startAttempt(seed)), queued: false };
    }
    // The store decides at the call and writes in call order: a run the scheduler dispatched at
    // once starts on a microtask, and its first record is written after its queued one.
    let written: Promise<unknown>;
    try {
      written = deps.queue.enqueue(record, { queue, spec: specText, params: options.params, fileName }, this.host.eventsOf(record));
    } catch (error) {
      written = Promise.reject(error);
    }
    try {
      await written;
    } catch (error) {
      // Taken out again while it waits; a run dispatched meanwhile fails as its item is missing.
      await scheduler.dequeue(name, dagRunId);
      throw error;
    }
    return { dagRunId, queued: true };
  }

  /** Takes a queued run out of its queue; it is recorded aborted. 404 when it is not queued. */
  async dequeue(name: string, dagRunId: string): Promise<void> {
    const { deps, scheduler, clock } = this.host;
    const run = await scheduler.dequeue(name, dagRunId);
    if (!run?.start) throw new AppError('not_found', `dag-run ${dagRunId} of DAG ${name} is not queued`);
    const aborted = { ...run.start.record, status: RunStatus.Aborted, finishedAt: isoTime(clock.now()) };
    await deps.queue.dequeue(aborted, this.host.eventsOf(aborted));
  }

  /**
   * Starts a run the scheduler dispatched, holding its slot until the run begins. A run that cannot
   * start (its params fail, its definition cannot run, or it is not active within 10 seconds) leaves
   * its queue recorded failed with the reason, and its slot is freed.
   */
  start(run: QueuedRun, slot: Slot): void {
    const { deps, scheduler, starter } = this.host;
    const entry = run.start;
    if (!entry) {
      scheduler.release(slot);
      return;
    }
    const requested = paramsFromRequest(entry.params ?? '');
    const seed: AttemptSeed = {
      dag: entry.dag, name: run.name, dagRunId: run.dagRunId, specText: entry.specText, fileName: entry.fileName,
      slot, queued: entry.record, params: startingParams(entry.dag.params, requested), ...traceSeed(entry.record.traceParent),
    };
    const giveUp = (reason: string) => {
      // Too late once it began: the run has started.
      if (seed.begun || seed.abandoned) return;
      seed.abandoned = reason;
      scheduler.release(slot);
      // A shutdown leaves it queued: its item is still stored, and the next start dispatches it.
      if (scheduler.view.admitting() !== 'open') return;
      void this.recordFailed(entry.record, entry.dag, reason);
    };
    const timers = deps.timers ?? systemTimers;
    const deadlineMs = deps.queuedStartDeadlineMs;
    const deadline = timers.setTimeout(() => giveUp(`it did not become active within ${deadlineMs / 1000} seconds`), deadlineMs);
    starter.startAttempt(seed, entry.record.attemptId)
      .catch((error: unknown) => giveUp(error instanceof Error ? error.message : String(error)))
      .finally(() => timers.clearTimeout(deadline));
  }

  /** A queued run that cannot start leaves its queue failed; its run log says why. */
  private recordFailed(record: RunRecord, dag: Dag | undefined, reason: string): Promise<void> {
    const { deps, clock } = this.host;
    const now = clock.now();
    const error = `the queued run could not start: ${reason}`;
    try {
      deps.logs.prepare(record.name, dag?.logDir);
      deps.logs.appendRunLog(record.log, logLine(now, 'ERROR', 'Queued run failed to start', { dag: record.name, 'run-id': record.dagRunId, error }));
      void deps.logs.closeRunLog(record.log);
    } catch (logError) {
      this.host.onStoreError(logError);
    }
    const failed = { ...record, status: RunStatus.Failed, finishedAt: isoTime(now), error };
    return deps.queue.dequeue(failed, this.host.eventsOf(failed)).then(() => undefined, this.host.onStoreError);
  }

  /** The queues a previous process left, back in the scheduler in their order. */
  async restore(): Promise<void> {
    const { deps, scheduler, clock, definitions } = this.host;
    for (const { queue } of deps.queue.queues()) {
      for (const item of deps.queue.items(queue)) {
        const record = deps.runs.get(item.name, item.dagRunId);
        // A run whose dispatch could not be stored (a full disk) was stopped as it started, and its
        // end stored later without its item: it has run, and its item goes.
        if (record && isFinalRunStatus(record.status)) {
          await deps.queue.dequeue(record, this.host.eventsOf(record)).catch(this.host.onStoreError);
          continue;
        }
        const specText = deps.runs.getSpec(item.name, item.dagRunId);
        let dag: Dag;
        try {
          if (!record || specText === undefined) throw new Error('its record or definition is missing');
          dag = usableDag(await definitions.parse(specText, { nameOverride: item.name, fileName: item.fileName }));
        } catch (error) {
          if (record) await this.recordFailed(record, undefined, (error as Error).message);
          continue;
        }
        scheduler.restoreQueued({
          queue, name: item.name, dagRunId: item.dagRunId, maxActiveRuns: dag.maxActiveRuns, ...(item.fileName ? { fileName: item.fileName } : {}), ...selectorOf(dag),
          start: { dag, specText, params: item.params, fileName: item.fileName, record },
        });
      }
    }
  }

  /** Every custom queue, and every other queue with a run running or waiting (docs/api.md, Queues); `only` that one. */
  list(only?: string): QueueListing[] {
    const { deps, scheduler, clock } = this.host;
    const { view } = scheduler;
    const reasons = view.waitReasons();
    const queuedRuns = view.queued();
    const limits = view.queueLimits();
    const runningIn = new Map<string, RunRecord[]>();
    for (const [key, queue] of view.queueOfRuns()) {
      if (only !== undefined && queue !== only) continue;
      const [name, dagRunId] = key.split('\u0000');
      const record = deps.runs.get(name, dagRunId);
      if (record?.status !== RunStatus.Running) continue;
      let records = runningIn.get(queue);
      if (!records) runningIn.set(queue, (records = []));
      records.push(record);
    }
    const names = [...new Set([...limits.keys(), ...queuedRuns.keys(), ...runningIn.keys()])].filter((name) => only === undefined || name === only);
    const now = clock.now();
    return names.sort().map((name) => {
      const queued = (queuedRuns.get(name) ?? []).map((run) => {
        const waitingFor = reasons.get(runKey(run.name, run.dagRunId)) ?? 'queue';
        return { record: run.start!.record, waitingFor, ...(waitingFor === 'worker' && run.workerSelector ? { workerSelector: run.workerSelector } : {}) };
      });
      const limit = limits.get(name);
      const oldest = queued[0] && Date.parse(queued[0].record.queuedAt);
      return {
        name, type: limit === undefined ? 'dag-based' : 'custom', ...(limit === undefined ? {} : { maxConcurrency: limit }),
        running: runningIn.get(name) ?? [], queued,
        ...(oldest ? { oldestQueuedAgeMs: Math.max(0, now - oldest) } : {}),
      };
    });
  }
}

/** The DAG's workerSelector when it names labels (the scheduler places its runs on a worker under distributed dispatch). */
export function selectorOf(dag: Dag): { workerSelector?: Record<string, string> } {
  return Object.keys(dag.workerSelector).length > 0 ? { workerSelector: { ...dag.workerSelector } } : {};
}

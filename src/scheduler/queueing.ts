// Queued runs: enqueue, dequeue, the start of a run the scheduler dispatched, the queues as the
// API lists them, and the queues a previous process left (restored at start, in their order).
// Decisions (which run starts, when) are the scheduler actor's; this keeps each queued run's
// definition until it starts, and its records.
import {
  AppError, runKey, RunStatus, attemptId as newAttemptId, isFinalRunStatus, isoTime, queueNameProblem, systemTimers,
  type Dag, type RunRecord,
} from '../core/index.ts';
import { mergeParams, paramsFromRequest } from '../definition/index.ts';
import { startingParams } from '../actors/index.ts';
import type { Definitions } from '../catalog/index.ts';
import type { StartOptions } from './start-options.ts';
import { queuedRecord } from '../actors/index.ts';
import { logLine } from '../actors/index.ts';
import type { AttemptSeed, RunStarter, StarterHost } from './run-starter.ts';
import type { QueuedRun, WaitReason } from './queue-order.ts';
import { waitKey } from './queue-order.ts';
import { admissionError } from './admission.ts';
import { admittedCount, findQueued, queuedCount, waitReasons } from './slots.ts';
import { usableDag } from '../catalog/index.ts';

/** definition format: limits: a dispatched run that is not active within this long leaves its queue failed. */
export const QUEUED_START_DEADLINE_MS = 10_000;

export interface EnqueueOptions extends StartOptions {
  /** The queue to wait in, for this run only; the DAG's `queue`, else its own queue, by default. */
  queue?: string;
}

export interface QueueListing {
  name: string;
  type: 'custom' | 'dag-based';
  maxConcurrency?: number;
  running: RunRecord[];
  queued: Array<{ record: RunRecord; waitingFor: WaitReason }>;
  /** How long the oldest queued run has waited; absent when none waits. */
  oldestQueuedAgeMs?: number;
}

interface Waiting {
  dag: Dag;
  specText: string;
  /** As the request gave them: evaluated when the run starts. */
  params?: string;
  fileName?: string;
  record: RunRecord;
}

export interface QueueingHost extends StarterHost {
  starter: RunStarter;
  definitions: Definitions;
  onStoreError: (error: unknown) => void;
  /** Tells subscribers of a status change no run actor makes (engine-events.ts). */
  announce: (record: RunRecord) => void;
}

export class Queueing {
  /** Queued runs by run key, with what their start needs: a dispatch parses nothing. */
  private readonly waiting = new Map<string, Waiting>();

  constructor(private readonly host: QueueingHost) {}

  async enqueue(dag: Dag, specText: string, options: EnqueueOptions, fileName?: string): Promise<{ dagRunId: string }> {
    const { deps, scheduler, starter, clock } = this.host;
    if (this.host.shuttingDown().draining) throw new AppError('internal_error', 'the server is shutting down');
    const { name, dagRunId } = starter.identity(dag, options);
    const queue = options.queue || dag.queue || name;
    const queueProblem = queueNameProblem(queue);
    if (queueProblem) throw new AppError('bad_request', queueProblem);
    const requested = paramsFromRequest(options.params ?? '');

    // From here to the scheduler's event nothing awaits: two requests never both pass the checks.
    const key = runKey(name, dagRunId);
    starter.refuseTaken(name, dagRunId);
    const context = scheduler.getSnapshot().context;
    // Singleton alone: an enqueue waits for maxActiveRuns instead of being refused.
    const refused = admissionError({
      name, maxActiveRuns: -1, singleton: options.singleton === true, kind: 'inline',
      active: admittedCount(context, name), queued: queuedCount(context, name),
    });
    if (refused) throw refused;
    const attemptId = newAttemptId();
    const log = deps.logs.runLogPath(name, dagRunId, attemptId, dag.logDir);
    const record = queuedRecord({ dag, name, dagRunId, attemptId, log, params: mergeParams(dag.params, requested), now: clock.now(), fileName });
    // The store decides at the call and writes in call order: the scheduler may dispatch the run
    // at once, its first record is written after its queued one.
    const written = deps.queue.enqueue(record, { queue, spec: specText, params: options.params, fileName });
    this.waiting.set(key, { dag, specText, params: options.params, fileName, record });
    this.host.announce(record);
    scheduler.send({ type: 'queue.add', run: { queue, name, dagRunId, maxActiveRuns: dag.maxActiveRuns, ...(fileName ? { fileName } : {}) } });
    try {
      await written;
    } catch (error) {
      if (findQueued(scheduler.getSnapshot().context, name, dagRunId)) {
        scheduler.send({ type: 'queue.remove', name, dagRunId });
        this.waiting.delete(key);
      }
      throw error;
    }
    return { dagRunId };
  }

  /** Whether the run waits in a queue. */
  holds(name: string, dagRunId: string): boolean {
    return findQueued(this.host.scheduler.getSnapshot().context, name, dagRunId) !== undefined;
  }

  /** Takes a queued run out of its queue; it is recorded aborted. 404 when it is not queued. */
  async dequeue(name: string, dagRunId: string): Promise<void> {
    const { deps, scheduler, clock } = this.host;
    const context = scheduler.getSnapshot().context;
    if (!findQueued(context, name, dagRunId)) throw new AppError('not_found', `dag-run ${dagRunId} of DAG ${name} is not queued`);
    scheduler.send({ type: 'queue.remove', name, dagRunId });
    const key = runKey(name, dagRunId);
    const { record } = this.waiting.get(key)!;
    this.waiting.delete(key);
    const aborted = { ...record, status: RunStatus.Aborted, finishedAt: isoTime(clock.now()) };
    this.host.announce(aborted);
    await deps.queue.dequeue(aborted);
  }

  /**
   * Starts a run the scheduler dispatched; it holds a reserved slot until its run actor takes it.
   * A run that cannot start (its params fail, its definition cannot run, or it is not active within
   * 10 seconds) leaves its queue recorded failed with the reason, and its slot is freed.
   */
  start(run: QueuedRun): void {
    const { deps, scheduler, starter, clock } = this.host;
    const key = runKey(run.name, run.dagRunId);
    const entry = this.waiting.get(key);
    this.waiting.delete(key);
    if (!entry) {
      scheduler.send({ type: 'run.release', name: run.name, dagRunId: run.dagRunId });
      return;
    }
    const requested = paramsFromRequest(entry.params ?? '');
    const seed: AttemptSeed = {
      dag: entry.dag, name: run.name, dagRunId: run.dagRunId, specText: entry.specText, fileName: entry.fileName,
      reservedSlot: true, queue: run.queue, queued: entry.record,
      params: startingParams(entry.dag.params, requested),
    };
    const giveUp = (reason: string) => {
      // Too late once its run actor has the slot: the run has started.
      if (!seed.reservedSlot) return;
      seed.reservedSlot = false;
      seed.abandoned = reason;
      scheduler.send({ type: 'run.release', name: run.name, dagRunId: run.dagRunId });
      // A shutdown leaves it queued: its item is still stored, and the next start dispatches it.
      if (this.host.shuttingDown().draining) return;
      this.recordFailed(entry.record, entry.dag, reason);
    };
    const timers = deps.timers ?? systemTimers;
    const deadlineMs = deps.queuedStartDeadlineMs ?? QUEUED_START_DEADLINE_MS;
    const deadline = timers.setTimeout(() => giveUp(`it did not become active within ${deadlineMs / 1000} seconds`), deadlineMs);
    starter.reserved.add(key);
    starter.startAttempt(seed, entry.record.attemptId)
      .catch((error: unknown) => giveUp(error instanceof Error ? error.message : String(error)))
      .finally(() => {
        timers.clearTimeout(deadline);
        starter.reserved.delete(key);
      });
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
    this.host.announce(failed);
    return deps.queue.dequeue(failed).then(() => undefined, this.host.onStoreError);
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
          await deps.queue.dequeue(record).catch(this.host.onStoreError);
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
        this.waiting.set(runKey(item.name, item.dagRunId), { dag, specText, params: item.params, fileName: item.fileName, record });
        scheduler.send({ type: 'queue.add', run: { queue, name: item.name, dagRunId: item.dagRunId, maxActiveRuns: dag.maxActiveRuns, ...(item.fileName ? { fileName: item.fileName } : {}) } });
      }
    }
  }

  /** Every custom queue, and every other queue with a run running or waiting (docs/api.md, Queues); `only` that one. */
  list(only?: string): QueueListing[] {
    const { deps, scheduler, clock } = this.host;
    const context = scheduler.getSnapshot().context;
    const reasons = waitReasons(context);
    const runningIn = new Map<string, RunRecord[]>();
    for (const [key, queue] of context.queueOf) {
      if (only !== undefined && queue !== only) continue;
      const [name, dagRunId] = key.split('\u0000');
      const record = deps.runs.get(name, dagRunId);
      if (record?.status !== RunStatus.Running) continue;
      let records = runningIn.get(queue);
      if (!records) runningIn.set(queue, (records = []));
      records.push(record);
    }
    const names = [...new Set([...context.queueLimits.keys(), ...context.queued.keys(), ...runningIn.keys()])].filter((name) => only === undefined || name === only);
    const now = clock.now();
    return names.sort().map((name) => {
      // Every run the scheduler holds queued is waiting here: added before the scheduler hears of it.
      const queued = (context.queued.get(name) ?? []).map((run) => ({
        record: this.waiting.get(runKey(run.name, run.dagRunId))!.record,
        waitingFor: reasons.get(waitKey(run)) ?? 'queue',
      }));
      const limit = context.queueLimits.get(name);
      const oldest = queued[0] && Date.parse(queued[0].record.queuedAt);
      return {
        name, type: limit === undefined ? 'dag-based' : 'custom', ...(limit === undefined ? {} : { maxConcurrency: limit }),
        running: runningIn.get(name) ?? [], queued,
        ...(oldest ? { oldestQueuedAgeMs: Math.max(0, now - oldest) } : {}),
      };
    });
  }
}

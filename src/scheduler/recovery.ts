// Recovery at start: runs that a process recorded active and never finished (it crashed, or was
// killed) are settled before the API opens, so every run is accounted for. A run whose interrupted
// step may retry goes on as a new attempt (resumption.ts); the others are recorded failed. The
// step processes such a process left running were ended before (executors/orphans.ts).
import { NodeStatus, RunStatus, eventsBetween, isoTime, type LogStore, type RunRecord, type RunStore } from '../core/index.ts';
import type { Definitions } from '../catalog/index.ts';
import type { PriorAttempt } from '../actors/index.ts';
import { logLine } from '../actors/index.ts';
import { usableDag } from '../catalog/index.ts';
import { INTERRUPTED, interruptedNode, resumption } from './resumption.ts';

export interface RecoveryDeps {
  runs: RunStore;
  logs: LogStore;
  definitions: Definitions;
  now: number;
  isActive(name: string, dagRunId: string): boolean;
  /** Starts the next attempt of a run (Engine.retry with the attempt given). */
  resume(attempt: PriorAttempt): Promise<unknown>;
}

/**
 * Settles every running run that is not active here. Queued runs are left alone: a queued record
 * always has its queue item (QueueStore writes both in one transaction), and the queue starts it.
 */
export async function settleInterrupted(deps: RecoveryDeps): Promise<void> {
  const interrupted = deps.runs.list({ status: RunStatus.Running, includeSubRuns: true })
    .filter((record) => !deps.isActive(record.name, record.dagRunId));
  await settleRuns(deps, interrupted);
}

/**
 * Settles runs that stopped without an end (their process, or their worker, went away): each
 * resumes as a new attempt when a step it was running may retry, else is recorded failed with
 * `reason`.
 */
export async function settleRuns(deps: RecoveryDeps, interrupted: readonly RunRecord[], reason = INTERRUPTED): Promise<void> {
  // Sub DAG runs first: a resumed caller runs its interrupted child again under the child's id,
  // which must be recorded failed by then, not overwritten after.
  const isSubRun = (record: RunRecord) => record.parentDAGRunId !== '';
  await Promise.all(interrupted.filter(isSubRun).map((record) => settle(deps, record, reason)));
  await Promise.all(interrupted.filter((record) => !isSubRun(record)).map((record) => settle(deps, record, reason)));
}

async function settle(deps: RecoveryDeps, record: RunRecord, reason: string): Promise<void> {
  const at = isoTime(deps.now);
  const fields = { dag: record.name, 'run-id': record.dagRunId, 'attempt-id': record.attemptId };
  deps.logs.appendRunLog(record.log, logLine(deps.now, 'ERROR', 'DAG run interrupted', { ...fields, ...(reason !== INTERRUPTED ? { reason } : {}) }));
  let notResumed: string | undefined;
  const attempt = await nextAttempt(deps, record, at, reason).catch((error: Error) => {
    notResumed = error.message;
    return undefined;
  });
  if (attempt) {
    try {
      deps.logs.appendRunLog(record.log, logLine(deps.now, 'WARN', 'DAG run resumed as a new attempt', {
        ...fields, steps: [...attempt.carried!.keys()].map((index) => record.nodes[index].step.name).join(', '),
      }));
      await deps.resume(attempt);
      void deps.logs.closeRunLog(record.log);
      return;
    } catch (error) {
      notResumed = (error as Error).message;
    }
  }
  if (notResumed !== undefined) deps.logs.appendRunLog(record.log, logLine(deps.now, 'ERROR', 'DAG run not resumed', { ...fields, error: notResumed }));
  void deps.logs.closeRunLog(record.log);
  const handlers = record.handlers && Object.fromEntries(Object.entries(record.handlers).map(([name, node]) => [name, node && interruptedNode(node, at, reason)]));
  const settled: RunRecord = {
    ...record,
    status: RunStatus.Failed,
    finishedAt: at,
    error: notResumed === undefined ? reason : `${reason} (not resumed: ${notResumed})`,
    nodes: record.nodes.map((node) => interruptedNode(node, at, reason)),
    ...(handlers ? { handlers } : {}),
  };
  await deps.runs.save(settled, undefined, eventsBetween(record, settled, at));
}

/** The attempt that resumes the run, when one of its interrupted steps may retry; throws when its definition cannot run. */
async function nextAttempt(deps: RecoveryDeps, record: RunRecord, at: string, reason: string): Promise<PriorAttempt | undefined> {
  // Only a step's retryPolicy resumes a run: without a running step there is nothing to retry.
  if (record.parentDAGRunId !== '' || !record.nodes.some((node) => node.status === NodeStatus.Running)) return undefined;
  const specText = deps.runs.getSpec(record.name, record.dagRunId);
  if (specText === undefined) return undefined;
  return resumption(usableDag(await deps.definitions.parse(specText, { nameOverride: record.name, fileName: record.fileName })), record, at, reason);
}

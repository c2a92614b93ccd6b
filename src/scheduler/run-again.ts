// Runs of a finished run: a retry (the same id as a new attempt, or a new run under another id),
// a run a crash interrupted going on (recovery.ts chose how), and a reschedule (a new run with the
// stored definition and params). Each asks the scheduler for admission as a start does.
import { AppError, MASK, dagRunIdProblem, type Dag, type RunRecord } from '../core/index.ts';
import { runProblems, mergeParams, paramsFromRequest } from '../definition/index.ts';
import { rerunSelection, type PriorAttempt } from '../actors/index.ts';
import { usableDag, type Definitions } from '../catalog/index.ts';
import { selectorOf, type Queueing } from './queueing.ts';
import type { RunStarter } from './run-starter.ts';
import type { EngineDeps } from './start-options.ts';

export interface RunAgainHost {
  deps: EngineDeps;
  definitions: Definitions;
  starter: RunStarter;
  queueing: Queueing;
  /** The run, `latest` naming the DAG's newest; 404 when there is none. */
  findRun(name: string, dagRunId: string): RunRecord;
}

/**
 * Runs a finished run again (docs/api.md, Retry): failed, aborted and unfinished nodes and
 * everything downstream of them run again, the others keep their results; `stepName` runs that
 * one step alone. `resume`: an attempt a crash interrupted goes on as recovery.ts chose.
 */
export async function retryRun(host: RunAgainHost, name: string, dagRunId: string, options: { dagRunId?: string; stepName?: string }, resume?: PriorAttempt): Promise<{ dagRunId: string }> {
  const found = host.findRun(name, dagRunId);
  const { specText, dag } = await storedDefinition(host, found, 'retry');
  // As it is now, after the parse: admission decides on the run as it is at the ask.
  const prior = host.findRun(found.name, found.dagRunId);
  const problems = runProblems(dag);
  if (problems.length > 0) throw new AppError('bad_request', `this DAG cannot run here: ${problems.join('; ')}`);
  const targetId = options.dagRunId && options.dagRunId !== prior.dagRunId ? options.dagRunId : prior.dagRunId;
  const idProblem = dagRunIdProblem(targetId);
  if (idProblem) throw new AppError('bad_request', idProblem);
  const attempt = resume ?? { record: prior, rerun: rerunSelection(dag, prior, options.stepName) };
  // maxActiveRuns holds a retry back as it does a start; a sub DAG run's (as its parent's start
  // does not wait for it) and a run resumed after a crash (admitted before) are not counted.
  const slot = host.starter.admit({
    kind: resume ? 'resume' : 'retry', name: prior.name, dagRunId: targetId, prior: prior.dagRunId,
    queue: dag.queue ?? prior.name, maxActiveRuns: dag.maxActiveRuns, uncounted: Boolean(prior.parentDAGRunId), ...selectorOf(dag),
  });
  // The run's own params, as they were: nothing of them runs again as a command.
  return host.starter.startAttempt({
    dag, name: prior.name, dagRunId: targetId, specText, fileName: prior.fileName, slot,
    params: async () => mergeParams(dag.params, paramsFromRequest(prior.params)),
    prior: attempt,
  });
}

/**
 * A new run of a finished one (docs/api.md, Reschedule), with its stored definition and params,
 * always as a singleton. It starts at once, or waits when its DAG's custom queue is busy.
 */
export async function rescheduleRun(host: RunAgainHost, name: string, dagRunId: string, options: { dagRunId?: string; dagName?: string }): Promise<{ dagRunId: string; queued: boolean }> {
  const prior = host.findRun(name, dagRunId);
  const { specText, dag } = await storedDefinition(host, prior, 'reschedule');
  const start = { params: prior.params, dagRunId: options.dagRunId || undefined, dagName: options.dagName ?? prior.name, singleton: true };
  return host.queueing.submit('reschedule', dag, specText, start, prior.fileName);
}

/** The definition a run was started with, as stored beside it. */
async function storedDefinition(host: RunAgainHost, run: RunRecord, verb: 'retry' | 'reschedule'): Promise<{ specText: string; dag: Dag }> {
  // Its params held its parent's secret, which was recorded masked: running it again would pass the mask on.
  if (run.parentDAGRunId && run.params.includes(MASK)) {
    throw new AppError('bad_request', `dag-run ${run.dagRunId} got a secret of its parent in its params, which is not stored: ${verb} the parent dag-run ${run.parentDAGRunId}`);
  }
  const specText = host.deps.runs.getSpec(run.name, run.dagRunId);
  if (specText === undefined) throw new AppError('not_found', `no definition stored for dag-run ${run.dagRunId}`);
  const parsed = await host.definitions.parse(specText, { nameOverride: run.name, fileName: run.fileName });
  return { specText, dag: usableDag(parsed) };
}

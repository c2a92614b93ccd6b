// Sub DAG runs a running run's step starts (step/sub-dag.ts decides which, with which params and
// ids). The target is a local DAG of the caller's file or a DAG file; a child carries its root and
// parent, and maxActiveRuns does not hold it back. A child whose id exists already (a retried
// parent's, or a retry of the calling step) runs again as a new attempt of that run, its
// succeeded steps kept, as Dagu does.
import { AppError, RunStatus, type Dag, type ParamDef, type RunRecord } from '../core/index.ts';
import { runProblems, paramsFromRequest } from '../definition/index.ts';
import { usableDag, type Definitions } from '../catalog/index.ts';
import { nestingProblem, rerunSelection, startingParams, type ChildStart, type PriorAttempt, type SubDagCall } from '../actors/index.ts';
import type { RunStarter } from './run-starter.ts';
import type { EngineDeps } from './start-options.ts';

export interface ChildRunsHost {
  deps: EngineDeps;
  definitions: Definitions;
  starter: RunStarter;
  whenFinished(name: string, dagRunId: string): Promise<void>;
}

export class ChildRuns {
  constructor(private readonly host: ChildRunsHost) {}

  async start(call: SubDagCall, child: ChildStart): Promise<{ dagName: string; dagRunId: string; params: ParamDef[]; finished: Promise<RunRecord> }> {
    const { deps, starter } = this.host;
    const { dag, specText, fileName } = await this.target(call);
    const { dagRunId } = child;
    const prior = deps.runs.get(dag.name, dagRunId);
    const storedActive = prior?.status === RunStatus.Running || prior?.status === RunStatus.Queued;
    const slot = starter.admit({ kind: 'sub', name: dag.name, dagRunId, maxActiveRuns: -1, storedActive, ...(call.workerSelector ? { workerSelector: call.workerSelector } : {}) });
    let params: ParamDef[] = [];
    await starter.startAttempt({
      dag, name: dag.name, dagRunId, specText, fileName, inheritedSecrets: call.parent.secrets, slot,
      ...(prior ? { prior: priorAttempt(dag, prior) } : {}),
      params: async (scope, run, secrets) => {
        params = await startingParams(dag.params, paramsFromRequest(child.params))(scope, run, secrets);
        return params;
      },
      ...(call.parent.traceExport && call.parent.traceParent ? { trace: { caller: { traceParent: call.parent.traceParent, export: call.parent.traceExport } } } : {}),
      lineage: { root: call.parent.root, parent: { name: call.parent.name, dagRunId: call.parent.dagRunId }, callers: [...call.parent.callers, call.parent.name] },
    });
    const finished = this.host.whenFinished(dag.name, dagRunId).then(() => deps.runs.get(dag.name, dagRunId)!);
    return { dagName: dag.name, dagRunId, params, finished };
  }

  /** The called DAG: a local DAG of the caller's file first, else a DAG file. */
  private async target(call: SubDagCall): Promise<{ dag: Dag; specText: string; fileName?: string }> {
    const target = call.target.replace(/\.ya?ml$/, '');
    const tooDeep = nestingProblem([...call.parent.callers, call.parent.name], target);
    if (tooDeep) throw new AppError('bad_request', tooDeep);
    const local = (await this.host.definitions.localDags(call.parent.specText)).find((candidate) => candidate.name === target);
    let found: { dag: Dag; specText: string; fileName?: string };
    if (local) {
      if (!local.dag || local.errors.length > 0) throw new AppError('bad_request', `local DAG ${target}: ${local.errors.join('; ')}`);
      found = { dag: local.dag, specText: call.parent.specText };
    } else {
      const loaded = await this.host.definitions.loadDag(target);
      if (!loaded) throw new AppError('not_found', `DAG ${target} not found: neither a local DAG of the file nor a DAG file`);
      found = { dag: usableDag(loaded.result), specText: loaded.text, fileName: target };
    }
    const problems = runProblems(found.dag);
    if (problems.length > 0) throw new AppError('bad_request', `this DAG cannot run here: ${problems.join('; ')}`);
    return found;
  }
}

/**
 * The next attempt of a child that ran before: its failed, aborted and unfinished steps run again.
 * When its definition's steps changed since, every step runs again.
 */
function priorAttempt(dag: Dag, prior: RunRecord): PriorAttempt {
  const sameSteps = prior.nodes.length === dag.steps.length && prior.nodes.every((node, index) => node.step.name === dag.steps[index].name);
  return { record: prior, rerun: sameSteps ? rerunSelection(dag, prior) : new Set(dag.steps.keys()) };
}

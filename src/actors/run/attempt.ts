// The first record of a run's attempt, and which nodes a retry runs again. Pure.
import { AppError, HANDLER_NODE_NAMES, NodeStatus, mapInTurns, RunStatus, isoTime, type Dag, type HandlerKind, type NodeRecord, type ParamDef, type RunRecord, type Step } from '../../core/index.ts';
import { dependencyNames, paramsJson, stepView } from '../../definition/index.ts';
import { maskParams } from './masking.ts';
import type { RunPlan } from './plan.ts';
import { downstreamOf } from './progress.ts';

/** A retry: the earlier attempt, and the nodes that run again (the others keep their results). */
export interface PriorAttempt {
  record: RunRecord;
  rerun: Set<number>;
  /** What nodes that run again keep of the earlier attempt: a run resumed after a crash counts its retries on. */
  carried?: Map<number, Pick<NodeRecord, 'retryCount' | 'error'>>;
}

/** A sub DAG run: the root of its tree and the run that called it. */
export interface Lineage {
  root: { name: string; dagRunId: string };
  parent: { name: string; dagRunId: string };
  /** The DAG names of every run above this one, the root first. */
  callers: readonly string[];
}

/** A node not started yet, for a step of the definition and its plan. */
function newNode(step: Step, planned: { stdout: string; stderr: string }): NodeRecord {
  return {
    step: stepView(step), stdout: planned.stdout, stderr: planned.stderr,
    startedAt: '', finishedAt: '', status: NodeStatus.NotStarted, retryCount: 0, doneCount: 0, error: '',
    subRuns: [], subRunsRepeated: [],
  };
}

/**
 * The record of a run waiting in a queue: status queued, `queuedAt` set, its nodes not started.
 * Its params are the request's over the definition's defaults, not evaluated yet: backtick
 * commands run when the run starts.
 */
export function queuedRecord(input: {
  dag: Dag; name: string; dagRunId: string; attemptId: string; log: string; params: ParamDef[]; now: number; fileName?: string;
}): RunRecord {
  const { dag, name, dagRunId, now } = input;
  return {
    name, dagRunId, attemptId: input.attemptId,
    rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Queued, queuedAt: isoTime(now), startedAt: '', finishedAt: '',
    log: input.log, params: paramsJson(input.params), createdAtMs: now,
    nodes: dag.steps.map((step) => newNode(step, { stdout: '', stderr: '' })),
    ...(input.fileName ? { fileName: input.fileName } : {}),
  };
}

/** The record an attempt starts with; a run of thousands of steps gets its nodes 1,000 per turn of the event loop. */
export async function attemptRecord(input: {
  dag: Dag; plan: RunPlan; params: ParamDef[]; now: number; fileName?: string; lineage?: Lineage; prior?: PriorAttempt;
  /** A queued run starting: it keeps its place in listings and the time it was queued. */
  queued?: RunRecord;
}): Promise<RunRecord> {
  const { dag, plan, now, prior, queued } = input;
  const nodes = await mapInTurns(dag.steps, (step, index) => {
    const node = newNode(step, plan.steps[index]);
    if (!prior) return node;
    return prior.rerun.has(index) ? { ...node, ...prior.carried?.get(index) } : { ...prior.record.nodes[index], step: node.step };
  });
  const handlers = Object.entries(plan.handlers).map(([kind, planned]) => [
    HANDLER_NODE_NAMES[kind as HandlerKind], newNode(dag.handlerOn[kind as HandlerKind]!, planned!),
  ]);
  return {
    name: plan.name, dagRunId: plan.dagRunId, attemptId: plan.attemptId,
    rootDAGRunName: plan.root.name, rootDAGRunId: plan.root.dagRunId,
    parentDAGRunName: input.lineage?.parent.name ?? '', parentDAGRunId: input.lineage?.parent.dagRunId ?? '',
    status: RunStatus.Running, queuedAt: queued?.queuedAt ?? '', startedAt: isoTime(now), finishedAt: '',
    log: plan.logPath,
    // A sub DAG run's params may carry its parent's secrets.
    params: paramsJson(maskParams(input.params, plan.secrets)),
    // A retry under the same id keeps its place in listings.
    createdAtMs: queued?.createdAtMs ?? (prior?.record.dagRunId === plan.dagRunId ? prior.record.createdAtMs : now),
    nodes,
    ...(handlers.length > 0 ? { handlers: Object.fromEntries(handlers) } : {}),
    ...(prior?.record.outputs ? { outputs: prior.record.outputs } : {}),
    ...(prior?.record.outputVars ? { outputVars: prior.record.outputVars } : {}),
    // The sub DAG runs of earlier attempts stay reachable: kept nodes still name them.
    ...(prior?.record.children ? { children: prior.record.children } : {}),
    ...(input.fileName ? { fileName: input.fileName } : {}),
  };
}

/**
 * The nodes a retry runs again (docs/api.md, Retry): `stepName` alone, or the failed, aborted and unfinished
 * nodes and every node downstream of them.
 */
export function rerunSelection(dag: Dag, prior: RunRecord, stepName?: string): Set<number> {
  const indexOf = new Map(dag.steps.map((step, index) => [step.name, index]));
  if (stepName !== undefined) {
    const index = indexOf.get(stepName);
    if (index === undefined) throw new AppError('not_found', `step ${stepName} not found in DAG ${prior.name}`);
    return new Set([index]);
  }
  const names = dependencyNames(dag.steps);
  const steps = dag.steps.map((step) => ({ depends: (names.get(step.name) ?? []).map((dependency) => indexOf.get(dependency)!) }));
  const unfinished = prior.nodes.flatMap((node, index) => (node.status === NodeStatus.Succeeded || node.status === NodeStatus.Skipped ? [] : [index]));
  return downstreamOf(steps, unfinished);
}

// The spans of a traced run, built from what it records: one for the run ("DAG: name") and one for
// each execution of a step or handler ("Step: name"), each retry and repeat its own. Names and
// attributes are Dagu's, with OpenTelemetry's CI/CD pipeline attributes beside them.
import { HANDLER_NODE_NAMES, NodeStatus, RunStatus, nodeStatusLabel, runStatusLabel, type NodeRecord, type RunRecord, type RunSpan, type SpanAttributes, type StepResult } from '../../core/index.ts';
import type { StepAttempt, StepFinishedEvent, StepRerunEvent } from '../step/step.machine.ts';
import type { RunPlan } from './plan.ts';

/** OpenTelemetry's `cicd.pipeline.result` / `cicd.pipeline.task.run.result` values. */
type CicdResult = 'success' | 'failure' | 'error' | 'timeout' | 'cancellation' | 'skip';

const NODE_RESULTS: Record<NodeStatus, CicdResult> = {
  [NodeStatus.NotStarted]: 'skip', [NodeStatus.Running]: 'error', [NodeStatus.Failed]: 'failure', [NodeStatus.Aborted]: 'cancellation',
  [NodeStatus.Succeeded]: 'success', [NodeStatus.Skipped]: 'skip', [NodeStatus.PartiallySucceeded]: 'success',
};

/** The status of one execution from its result, as the node would show it had it been the last. */
function executionStatus(result: StepResult): NodeStatus {
  if (result.kind === 'skipped') return NodeStatus.Skipped;
  if (result.kind === 'error') return result.code === 'stopped' ? NodeStatus.Aborted : NodeStatus.Failed;
  if (result.exitCode !== 0 || result.error) return NodeStatus.Failed;
  return result.partial ? NodeStatus.PartiallySucceeded : NodeStatus.Succeeded;
}

function executionError(result: StepResult): string | undefined {
  if (result.kind === 'error') return result.message;
  if (result.kind === 'ok' && (result.exitCode !== 0 || result.error)) return result.error ?? `exit status ${result.exitCode}`;
  return undefined;
}

/**
 * The span of one execution of a step (or handler) `name`. `before`: its node before the execution's
 * result was applied (its retries and executions so far); `after`: the node once the step ended, for
 * its last execution. The first execution starts at the node's recorded start.
 */
export function executionSpan(plan: RunPlan, name: string, attempt: StepAttempt, result: StepResult, endMs: number, before: NodeRecord, after?: NodeRecord): RunSpan {
  const first = before.retryCount === 0 && before.doneCount === 0 && before.startedAt !== '';
  const status = after?.status ?? executionStatus(result);
  const error = status === NodeStatus.Failed ? (after?.error || executionError(result) || 'failed') : undefined;
  const exitCode = result.kind === 'ok' ? result.exitCode : after?.exitCode;
  const attributes: SpanAttributes = {
    'step.name': name,
    'step.status': nodeStatusLabel(status),
    'step.retry': before.retryCount,
    'step.execution': before.doneCount + 1,
    'cicd.pipeline.name': plan.name,
    'cicd.pipeline.run.id': plan.dagRunId,
    'cicd.pipeline.task.name': name,
    'cicd.pipeline.task.run.result': NODE_RESULTS[status],
  };
  // As Dagu: an exit code only when the process failed with one.
  if (exitCode !== undefined && exitCode !== 0) attributes['step.exit_code'] = exitCode;
  return {
    name: `Step: ${name}`, spanId: attempt.spanId, parentSpanId: plan.trace!.spanId,
    startMs: first ? Date.parse(before.startedAt) : attempt.startedAt, endMs, attributes, ...(error !== undefined ? { error } : {}),
  };
}

/**
 * The span of the execution a step's event ends, when the run is traced: `record` is the run's
 * record before the event, `updated` after it when the step ended.
 */
export function eventSpan(plan: RunPlan, record: RunRecord, event: StepRerunEvent | StepFinishedEvent, updated?: RunRecord): RunSpan | undefined {
  if (!plan.trace || !event.attempt) return undefined;
  const nodeOf = (of: RunRecord) => (event.handler ? of.handlers?.[HANDLER_NODE_NAMES[event.handler]] : of.nodes[event.index]);
  const before = nodeOf(record);
  if (!before) return undefined;
  const name = event.handler ? HANDLER_NODE_NAMES[event.handler] : before.step.name;
  return executionSpan(plan, name, event.attempt, event.result, event.at, before, updated ? nodeOf(updated) : undefined);
}

/** The run's own span, once its record is final; `timedOut`: the DAG's timeout ended it. */
export function runSpan(plan: RunPlan, record: RunRecord, timedOut: boolean): RunSpan {
  const result: CicdResult = record.status === RunStatus.Failed ? 'failure'
    : record.status === RunStatus.Aborted ? (timedOut ? 'timeout' : 'cancellation') : 'success';
  const attributes: SpanAttributes = {
    'dag.name': record.name,
    'dag.run_id': record.dagRunId,
    'dag.status': runStatusLabel(record.status),
    'cicd.pipeline.name': record.name,
    'cicd.pipeline.run.id': record.dagRunId,
    'cicd.pipeline.result': result,
  };
  if (record.parentDAGRunId !== '') {
    attributes['dag.parent_run_id'] = record.parentDAGRunId;
    attributes['dag.parent_name'] = record.parentDAGRunName;
  }
  const trace = plan.trace!;
  const failed = record.status === RunStatus.Failed;
  return {
    name: `DAG: ${record.name}`, spanId: trace.spanId, ...(trace.parentSpanId ? { parentSpanId: trace.parentSpanId } : {}),
    startMs: Date.parse(record.startedAt || record.finishedAt), endMs: Date.parse(record.finishedAt), attributes,
    ...(failed ? { error: record.error || failedSteps(record.nodes) } : {}),
  };
}

function failedSteps(nodes: readonly NodeRecord[]): string {
  const names = nodes.filter((node) => node.status === NodeStatus.Failed).map((node) => node.step.name);
  return names.length > 0 ? `failed steps: ${names.join(', ')}` : 'the run failed';
}

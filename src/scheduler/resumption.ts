// How a run that a crash interrupted goes on: each step it was running is a failed execution that
// follows its retryPolicy. Pure.
import { NodeStatus, type Dag, type NodeRecord, type RunRecord, type StepResult } from '../core/index.ts';
import type { PriorAttempt } from '../actors/index.ts';
import { shouldRetry } from '../actors/index.ts';

export const INTERRUPTED = 'the server stopped while the run was active';

/** What the interruption was to a step: an execution that failed with no exit code (as a step host's death). */
const interruption = (reason: string): StepResult => ({ kind: 'error', code: 'interrupted', message: reason });

/** A node that was running when the server (or its worker) stopped, recorded failed. */
export function interruptedNode(node: NodeRecord, finishedAt: string, reason = INTERRUPTED): NodeRecord {
  return node.status === NodeStatus.Running ? { ...node, status: NodeStatus.Failed, finishedAt, error: reason } : node;
}

/**
 * The next attempt of an interrupted run, or undefined when none of its running steps may retry
 * (the run is then recorded failed). In it, the steps with retries left run again with their
 * retryCount counting the interruption; those without are failed; steps that had not started run;
 * every other node keeps its result, and the run its outputs. A sub DAG run is never resumed on
 * its own: its caller's step, if it retries, starts a new one.
 */
export function resumption(dag: Dag, record: RunRecord, finishedAt: string, reason = INTERRUPTED): PriorAttempt | undefined {
  if (record.parentDAGRunId !== '' || record.nodes.length !== dag.steps.length) return undefined;
  const rerun = new Set<number>();
  const carried: NonNullable<PriorAttempt['carried']> = new Map();
  const nodes = record.nodes.slice();
  record.nodes.forEach((node, index) => {
    if (node.status === NodeStatus.NotStarted) rerun.add(index);
    if (node.status !== NodeStatus.Running) return;
    if (shouldRetry(dag.steps[index].retryPolicy, interruption(reason), node.retryCount)) {
      rerun.add(index);
      carried.set(index, { retryCount: node.retryCount + 1, error: reason });
    } else {
      nodes[index] = interruptedNode(node, finishedAt, reason);
    }
  });
  return carried.size > 0 ? { record: { ...record, nodes }, rerun, carried } : undefined;
}

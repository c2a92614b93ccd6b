// Pure decisions over a run's nodes: the final status, the steps downstream of others. Which steps
// can start, event by event, is schedule.ts's.
import { NodeStatus, RunStatus, type NodeRecord } from '../../core/index.ts';

export interface StepDeps {
  /** Indexes of the steps this one depends on. */
  depends: number[];
}

/**
 * The status of a run whose nodes are all settled, or that was stopped or timed out (docs/api.md):
 * a timeout fails the run, a stop aborts it. Otherwise succeeded without failures; partially
 * succeeded when continueOn allowed every failure and at least one node succeeded (Dagu's rule:
 * a chain whose last step fails with continueOn ends partially succeeded); failed otherwise.
 */
export function finalStatus(nodes: NodeRecord[], stopped: boolean, continued: readonly number[] = [], timedOut = false): RunStatus {
  if (timedOut) return RunStatus.Failed;
  if (stopped) return RunStatus.Aborted;
  const failures = nodes.map((node, index) => ({ node, index }))
    .filter(({ node }) => node.status === NodeStatus.Failed || node.status === NodeStatus.Aborted);
  if (failures.length === 0) return RunStatus.Succeeded;
  // A set: a run of thousands of allowed failures must not test each against every step.
  const allowed = new Set(continued);
  const forgiven = failures.every(({ node, index }) => node.status === NodeStatus.Failed && allowed.has(index));
  return forgiven && nodes.some((node) => node.status === NodeStatus.Succeeded) ? RunStatus.PartiallySucceeded : RunStatus.Failed;
}

/** `roots` and every step downstream of them, transitively. */
export function downstreamOf(steps: StepDeps[], roots: number[]): Set<number> {
  const dependants = dependantsOf(steps);
  const found = new Set(roots);
  // A walk along the dependants: each step is visited once, whatever the order of the definition.
  const queue = [...found];
  for (let next = 0; next < queue.length; next++) {
    for (const dependant of dependants[queue[next]]) {
      if (found.has(dependant)) continue;
      found.add(dependant);
      queue.push(dependant);
    }
  }
  return found;
}

/** The steps that depend on each step, in definition order. */
export function dependantsOf(steps: readonly StepDeps[]): number[][] {
  const dependants: number[][] = steps.map(() => []);
  steps.forEach((step, index) => {
    for (const dependency of step.depends) dependants[dependency].push(index);
  });
  return dependants;
}

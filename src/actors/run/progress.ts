// Pure decisions over a run's nodes: which steps can start, which can never run, the final status.
import { NodeStatus, RunStatus, type NodeRecord } from '../../core/index.ts';

export interface StepDeps {
  /** Indexes of the steps this one depends on. */
  depends: number[];
}

const isDone = (status: NodeStatus) =>
  status === NodeStatus.Succeeded || status === NodeStatus.Failed || status === NodeStatus.Aborted || status === NodeStatus.Skipped;

const stopsDependents = (status: NodeStatus) =>
  status === NodeStatus.Failed || status === NodeStatus.Aborted || status === NodeStatus.Skipped;

/**
 * Not-started steps whose dependencies all succeeded (or failed or were skipped in a way their
 * continueOn allows: `continued`), in definition order, up to the free slots.
 */
export function readySteps(steps: StepDeps[], nodes: NodeRecord[], maxActiveSteps: number, continued: readonly number[] = []): number[] {
  let running = 0;
  for (const node of nodes) if (node.status === NodeStatus.Running) running++;
  const free = Math.max(maxActiveSteps - running, 0);
  const ready: number[] = [];
  const satisfied = (dependency: number) => nodes[dependency].status === NodeStatus.Succeeded || continued.includes(dependency);
  for (let index = 0; index < steps.length && ready.length < free; index++) {
    if (nodes[index].status === NodeStatus.NotStarted && steps[index].depends.every(satisfied)) ready.push(index);
  }
  return ready;
}

/**
 * Not-started steps that can never run: index -> the dependency that stops them and what they
 * become. Downstream of a failure or an abort they are aborted; downstream of a skip, skipped
 * (Dagu's rule), unless continueOn let that dependency's outcome through (`continued`).
 */
export function blockedSteps(steps: StepDeps[], nodes: NodeRecord[], continued: readonly number[] = []): Map<number, { culprit: number; status: NodeStatus }> {
  const blocked = new Map<number, { culprit: number; status: NodeStatus }>();
  // The common case, checked after every event of a run: nothing failed, aborted or was skipped.
  if (!nodes.some((node) => stopsDependents(node.status))) return blocked;
  const status = nodes.map((node) => node.status);
  // Definition order is a topological order for chains; repeat until nothing changes for graphs.
  let changed = true;
  while (changed) {
    changed = false;
    steps.forEach((step, index) => {
      if (status[index] !== NodeStatus.NotStarted || blocked.has(index)) return;
      const stops = (dependency: number) => !continued.includes(dependency) && stopsDependents(status[dependency]);
      const culprit = step.depends.find(stops);
      if (culprit === undefined) return;
      const becomes = status[culprit] === NodeStatus.Skipped ? NodeStatus.Skipped : NodeStatus.Aborted;
      blocked.set(index, { culprit, status: becomes });
      status[index] = becomes;
      changed = true;
    });
  }
  return blocked;
}

export function allSettled(nodes: NodeRecord[]): boolean {
  return nodes.every((node) => isDone(node.status));
}

export function anyRunning(nodes: NodeRecord[]): boolean {
  return nodes.some((node) => node.status === NodeStatus.Running);
}

/**
 * The status of a run whose nodes are all settled, or that was stopped or timed out (COMPAT.md):
 * a timeout fails the run, a stop aborts it. Otherwise failed when a
 * failure was not allowed by continueOn, or was allowed but nothing depends on it; partially
 * succeeded when every failure was allowed and let later steps run; succeeded otherwise.
 */
export function finalStatus(nodes: NodeRecord[], stopped: boolean, steps: StepDeps[] = [], continued: readonly number[] = [], timedOut = false): RunStatus {
  if (timedOut) return RunStatus.Failed;
  if (stopped) return RunStatus.Aborted;
  const failures = nodes.map((node, index) => ({ node, index }))
    .filter(({ node }) => node.status === NodeStatus.Failed || node.status === NodeStatus.Aborted);
  if (failures.length === 0) return RunStatus.Succeeded;
  const hasDependents = (index: number) => steps.some((step) => step.depends.includes(index));
  const forgiven = failures.every(({ node, index }) => node.status === NodeStatus.Failed && continued.includes(index) && hasDependents(index));
  return forgiven ? RunStatus.PartiallySucceeded : RunStatus.Failed;
}

/** `roots` and every step downstream of them, transitively. */
export function downstreamOf(steps: StepDeps[], roots: number[]): Set<number> {
  const found = new Set(roots);
  let changed = true;
  while (changed) {
    changed = false;
    steps.forEach((step, index) => {
      if (!found.has(index) && step.depends.some((dependency) => found.has(dependency))) {
        found.add(index);
        changed = true;
      }
    });
  }
  return found;
}

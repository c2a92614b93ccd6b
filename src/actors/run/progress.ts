// Pure decisions over a run's nodes: which steps can start, which can never run, the final status.
import { NodeStatus, RunStatus, type NodeRecord } from '../../core/index.ts';

export interface StepDeps {
  /** Indexes of the steps this one depends on. */
  depends: number[];
}

const isDone = (status: NodeStatus) =>
  status === NodeStatus.Succeeded || status === NodeStatus.Failed || status === NodeStatus.Aborted || status === NodeStatus.Skipped;

/** Not-started steps whose dependencies all succeeded, in definition order, up to the free slots. */
export function readySteps(steps: StepDeps[], nodes: NodeRecord[], maxActiveSteps: number): number[] {
  let running = 0;
  for (const node of nodes) if (node.status === NodeStatus.Running) running++;
  const free = Math.max(maxActiveSteps - running, 0);
  const ready: number[] = [];
  for (let index = 0; index < steps.length && ready.length < free; index++) {
    if (nodes[index].status !== NodeStatus.NotStarted) continue;
    if (steps[index].depends.every((dependency) => nodes[dependency].status === NodeStatus.Succeeded)) ready.push(index);
  }
  return ready;
}

/** Not-started steps that can never run because a dependency failed or was aborted: index -> that dependency. */
export function blockedSteps(steps: StepDeps[], nodes: NodeRecord[]): Map<number, number> {
  const blocked = new Map<number, number>();
  const status = nodes.map((node) => node.status);
  // Definition order is a topological order for chains; repeat until nothing changes for graphs.
  let changed = true;
  while (changed) {
    changed = false;
    steps.forEach((step, index) => {
      if (status[index] !== NodeStatus.NotStarted || blocked.has(index)) return;
      const culprit = step.depends.find((dependency) =>
        status[dependency] === NodeStatus.Failed || status[dependency] === NodeStatus.Aborted || status[dependency] === NodeStatus.Skipped);
      if (culprit !== undefined) {
        blocked.set(index, culprit);
        status[index] = NodeStatus.Aborted;
        changed = true;
      }
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

/** The status of a run whose nodes are all settled, or that was stopped. */
export function finalStatus(nodes: NodeRecord[], stopped: boolean): RunStatus {
  if (stopped) return RunStatus.Aborted;
  if (nodes.some((node) => node.status === NodeStatus.Failed || node.status === NodeStatus.Aborted)) return RunStatus.Failed;
  return RunStatus.Succeeded;
}

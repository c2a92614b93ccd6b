// Which steps of a run can start and which can never run, kept up to date event by event: each
// step's dependants and a counter of its upstreams not yet met. An event costs what it changes (the
// step and its dependants), not the size of the run: scanning every step on every event made a run
// of 10,000 chained steps quadratic (minutes, with the event loop held for seconds at a time).
//
// The schedule is the run actor's working state. It is changed in place, by the one action that
// handles an event (guards only read it), because copying arrays of the run's size on every event
// would cost what the scans did.
import { NodeStatus, nodeSucceeded, type ContinueOn, type NodeRecord } from '../../core/index.ts';
import { failureContinues } from './continue-on.ts';
import { dependantsOf, type StepDeps } from './progress.ts';

/** How a settled step leaves its dependants. */
export const Outcome = {
  Pending: 0,
  /** Succeeded, or failed or skipped in a way its continueOn lets through. */
  Met: 1,
  /** Failed, aborted or skipped: its not-started dependants can never run. */
  Stops: 2,
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

export interface Schedule {
  /** The steps that depend on each step, in definition order. Fixed for the run. */
  dependants: number[][];
  /** Per step: its upstreams that have not met it yet. */
  unmet: number[];
  /** Per step: how it left its dependants, once settled. */
  outcome: Outcome[];
  /** Not-started steps whose upstreams all met them: a binary min-heap, so the lowest index starts first. */
  ready: number[];
  /** Steps that stop their dependants and whose dependants were not yet blocked: a queue. */
  stoppers: number[];
  /** Steps running now. */
  running: number;
  /** Steps that succeeded, failed, were aborted or skipped. */
  settled: number;
}

export interface BlockedStep {
  index: number;
  /** The upstream that stops it (the first in its `depends` that does). */
  culprit: number;
  /** Aborted downstream of a failure or an abort; skipped downstream of a skip (Dagu's rule). */
  status: NodeStatus;
}

const isSettled = (status: NodeStatus) =>
  nodeSucceeded(status) || status === NodeStatus.Failed || status === NodeStatus.Aborted || status === NodeStatus.Skipped;

/**
 * The schedule of a run whose nodes may already hold results (a retry, or a run resumed after a
 * crash, keeps the steps it does not run again). Those results count as they did: success meets,
 * a failure or skip its continueOn let through meets (its exit code is kept; its output is not,
 * so an output pattern cannot let it through again), anything else stops.
 */
export function newSchedule(steps: ReadonlyArray<StepDeps & { continueOn?: ContinueOn }>, nodes: readonly NodeRecord[]): Schedule {
  const dependants = dependantsOf(steps);
  const schedule: Schedule = {
    dependants, unmet: steps.map((step) => step.depends.length), outcome: steps.map(() => Outcome.Pending),
    ready: [], stoppers: [], running: 0, settled: 0,
  };
  nodes.forEach((node, index) => {
    if (node.status === NodeStatus.Running) schedule.running++;
    if (!isSettled(node.status)) return;
    schedule.settled++;
    settle(schedule, index, keptResultLets(node, steps[index].continueOn) ? Outcome.Met : Outcome.Stops);
  });
  nodes.forEach((node, index) => {
    if (node.status === NodeStatus.NotStarted && schedule.unmet[index] === 0) heapPush(schedule.ready, index);
  });
  return schedule;
}

function keptResultLets(node: NodeRecord, continueOn: ContinueOn | undefined): boolean {
  if (nodeSucceeded(node.status)) return true;
  if (node.status === NodeStatus.Skipped) return continueOn?.skipped === true;
  if (node.status !== NodeStatus.Failed) return false;
  return failureContinues(continueOn && { ...continueOn, output: [] }, { kind: 'ok', exitCode: node.exitCode ?? -1 });
}

/** A step's outcome reaches its dependants: met ones count down, a stop is queued for takeBlocked. */
function settle(schedule: Schedule, index: number, outcome: typeof Outcome.Met | typeof Outcome.Stops): void {
  schedule.outcome[index] = outcome;
  if (outcome === Outcome.Stops) {
    if (schedule.dependants[index].length > 0) schedule.stoppers.push(index);
    return;
  }
  for (const dependant of schedule.dependants[index]) schedule.unmet[dependant]--;
}

/** A running step ended: `lets` says whether its dependants may run (success, or continueOn). */
export function recordFinished(schedule: Schedule, nodes: readonly NodeRecord[], index: number, lets: boolean): void {
  if (schedule.outcome[index] !== Outcome.Pending) return;
  schedule.running--;
  schedule.settled++;
  settle(schedule, index, lets ? Outcome.Met : Outcome.Stops);
  if (!lets) return;
  for (const dependant of schedule.dependants[index]) {
    if (schedule.unmet[dependant] === 0 && nodes[dependant].status === NodeStatus.NotStarted) heapPush(schedule.ready, dependant);
  }
}

/**
 * The not-started steps that can now never run, transitively downstream of the steps that stopped
 * since the last call; each counts as settled. `status` reads a node's status as it is now.
 */
export function takeBlocked(schedule: Schedule, steps: readonly StepDeps[], status: (index: number) => NodeStatus): BlockedStep[] {
  const blocked: BlockedStep[] = [];
  const becomes = new Map<number, NodeStatus>();
  const statusOf = (index: number) => becomes.get(index) ?? status(index);
  for (let next = 0; next < schedule.stoppers.length; next++) {
    for (const dependant of schedule.dependants[schedule.stoppers[next]]) {
      if (schedule.outcome[dependant] !== Outcome.Pending || statusOf(dependant) !== NodeStatus.NotStarted) continue;
      const culprit = steps[dependant].depends.find((dependency) => schedule.outcome[dependency] === Outcome.Stops)!;
      const becoming = statusOf(culprit) === NodeStatus.Skipped ? NodeStatus.Skipped : NodeStatus.Aborted;
      becomes.set(dependant, becoming);
      blocked.push({ index: dependant, culprit, status: becoming });
      schedule.settled++;
      settle(schedule, dependant, Outcome.Stops);
    }
  }
  schedule.stoppers.length = 0;
  return blocked;
}

/** maxActiveSteps 0 (as Dagu reads it): no limit. */
const stepLimit = (maxActiveSteps: number) => (maxActiveSteps > 0 ? maxActiveSteps : Number.POSITIVE_INFINITY);

/** The ready steps that fit the free slots of maxActiveSteps, lowest index first; they count as running. */
export function takeReady(schedule: Schedule, maxActiveSteps: number): number[] {
  const started: number[] = [];
  const limit = stepLimit(maxActiveSteps);
  while (schedule.ready.length > 0 && schedule.running < limit) {
    started.push(heapPop(schedule.ready));
    schedule.running++;
  }
  return started;
}

/** Whether an event left steps to start or to block (the run actor then calls takeBlocked and takeReady). */
export function hasStepsToStart(schedule: Schedule, maxActiveSteps: number): boolean {
  return schedule.stoppers.length > 0 || (schedule.ready.length > 0 && schedule.running < stepLimit(maxActiveSteps));
}

export function allStepsSettled(schedule: Schedule): boolean {
  return schedule.settled === schedule.outcome.length;
}

function heapPush(heap: number[], value: number): void {
  let at = heap.push(value) - 1;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (heap[parent] <= value) break;
    heap[at] = heap[parent];
    at = parent;
  }
  heap[at] = value;
}

function heapPop(heap: number[]): number {
  const top = heap[0];
  const last = heap.pop()!;
  if (heap.length === 0) return top;
  let at = 0;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= heap.length) break;
    if (child + 1 < heap.length && heap[child + 1] < heap[child]) child++;
    if (heap[child] >= last) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = last;
  return top;
}

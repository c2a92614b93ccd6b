// Run and node status codes and their labels. Codes are the wire format; labels are derived.

export const RunStatus = {
  NotStarted: 0,
  Running: 1,
  Failed: 2,
  Aborted: 3,
  Succeeded: 4,
  Queued: 5,
  PartiallySucceeded: 6,
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export const NodeStatus = {
  NotStarted: 0,
  Running: 1,
  Failed: 2,
  Aborted: 3,
  Succeeded: 4,
  Skipped: 5,
  /** A sub DAG call whose child run ended partially succeeded (as Dagu). */
  PartiallySucceeded: 6,
} as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

const runLabels = ['not_started', 'running', 'failed', 'aborted', 'succeeded', 'queued', 'partially_succeeded'] as const;
const nodeLabels = ['not_started', 'running', 'failed', 'aborted', 'succeeded', 'skipped', 'partially_succeeded'] as const;

export const RUN_STATUS_LABELS: readonly RunStatusLabel[] = runLabels;
export const NODE_STATUS_LABELS: readonly NodeStatusLabel[] = nodeLabels;

export type RunStatusLabel = (typeof runLabels)[number];
export type NodeStatusLabel = (typeof nodeLabels)[number];

export function runStatusLabel(status: RunStatus): RunStatusLabel {
  return runLabels[status];
}

export function nodeStatusLabel(status: NodeStatus): NodeStatusLabel {
  return nodeLabels[status];
}

export function isRunStatus(value: number): value is RunStatus {
  return Number.isInteger(value) && value >= 0 && value <= 6;
}

export function isNodeStatus(value: number): value is NodeStatus {
  return Number.isInteger(value) && value >= 0 && value <= 6;
}

/** A run in one of these states will not change again by itself. */
/** A node whose dependants may run: succeeded, or a sub DAG call whose child partially succeeded. */
export function nodeSucceeded(status: NodeStatus): boolean {
  return status === NodeStatus.Succeeded || status === NodeStatus.PartiallySucceeded;
}

export function isFinalRunStatus(status: RunStatus): boolean {
  return status === RunStatus.Failed || status === RunStatus.Aborted ||
    status === RunStatus.Succeeded || status === RunStatus.PartiallySucceeded;
}

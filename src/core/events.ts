// What happens, as events: the run and step transitions a run's records show, and the changes of
// definitions and queues an operator's screen follows. Each is numbered in the event log (its
// `seq`) in the commit of the record it describes. Pure: the shapes, the filter and the diff.
import { NODE_STATUS_LABELS, RUN_STATUS_LABELS, isFinalRunStatus, nodeStatusLabel, runStatusLabel, type NodeStatusLabel, type RunStatusLabel } from './status.ts';
import type { RunRecord } from './run.ts';

export interface RunEventBody {
  type: `run.${RunStatusLabel}`;
  name: string;
  dagRunId: string;
  status: number;
  at: string;
  /** '' for a root run (the runs `GET /dag-runs` lists). */
  parentDAGRunId: string;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
}

export interface StepEventBody {
  type: `step.${NodeStatusLabel}`;
  name: string;
  dagRunId: string;
  stepName: string;
  status: number;
  at: string;
  startedAt: string;
  finishedAt: string;
  /** The node's error text ('' when none): what the command's progress shows for a failed step. */
  error: string;
}

export const DAG_CHANGES = ['created', 'updated', 'renamed', 'deleted', 'suspended', 'resumed'] as const;
export type DagChange = (typeof DAG_CHANGES)[number];

export interface DagEventBody {
  type: `dag.${DagChange}`;
  /** The DAG's file name (its name before a rename). */
  name: string;
  at: string;
  /** A rename's new name. */
  newName?: string;
}

export interface QueueEventBody {
  type: 'queue.limit_changed';
  queue: string;
  maxConcurrency: number;
  at: string;
}

export type EventBody = RunEventBody | StepEventBody | DagEventBody | QueueEventBody;

/** Every event type, and the wildcard of each kind. */
export const EVENT_TYPES: readonly string[] = [
  ...RUN_STATUS_LABELS.map((label) => `run.${label}`), ...NODE_STATUS_LABELS.map((label) => `step.${label}`),
  ...DAG_CHANGES.map((change) => `dag.${change}`), 'queue.limit_changed',
];
export const EVENT_KINDS = ['run.*', 'step.*', 'dag.*', 'queue.*'] as const;

/** An event as the log holds it: `seq` only grows, and a client resumes after the last one it saw. */
export type EngineEvent = EventBody & { seq: number };

export type EngineListener = (event: EngineEvent) => void;

/** What a subscriber wants: every field given narrows; none given, everything. */
export interface EventFilter {
  /** DAG names (a DAG event's `name`, a run's or step's DAG). */
  dagNames?: readonly string[];
  dagRunId?: string;
  /** Event types; `run.*`, `step.*`, `dag.*` and `queue.*` take every type of the kind. */
  types?: readonly string[];
}

/** The event log as readers see it: committed events only, in order. */
export interface EventLog {
  /** The newest committed sequence number (0 when none ever was). */
  readonly head: number;
  /** Events up to this number were removed by retention: a resume point before it missed some. */
  readonly prunedThrough: number;
  /** How many events are kept. */
  readonly size: number;
  /** Up to `limit` committed events after `after`, in order. */
  read(after: number, limit: number): EngineEvent[];
  /** Every event as it commits, in order; the function given back stops it. */
  subscribe(listener: EngineListener): () => void;
}

export function eventMatches(filter: EventFilter, event: EngineEvent): boolean {
  if (filter.dagRunId !== undefined && (!('dagRunId' in event) || event.dagRunId !== filter.dagRunId)) return false;
  if (filter.dagNames !== undefined && (!('name' in event) || !filter.dagNames.includes(event.name))) return false;
  if (filter.types !== undefined) {
    const kind = event.type.slice(0, event.type.indexOf('.'));
    if (!filter.types.includes(event.type) && !filter.types.includes(`${kind}.*`)) return false;
  }
  return true;
}

/** What a run's statuses were, as the events told them: the run's and each node's. */
export interface SeenStatuses {
  run: number;
  nodes: number[];
}

/**
 * The events of one transition of a run, from what was told before (`seen`; undefined: nothing
 * was) to `record`; `changed`: the nodes that may differ (every node when nothing was seen).
 * Updates `seen` in place and gives it back. A run's start comes before its steps' events, its end
 * after them.
 */
export function transitionEvents(seen: SeenStatuses | undefined, record: RunRecord, changed: Iterable<number>, at: () => string, into: EventBody[]): SeenStatuses {
  const runChanged = !seen || seen.run !== record.status;
  const final = isFinalRunStatus(record.status);
  if (runChanged && !final) into.push(runEvent(record, at()));
  const statuses = seen?.nodes ?? record.nodes.map(() => 0);
  const indexes = seen ? [...changed].sort((a, b) => a - b) : record.nodes.keys();
  for (const index of indexes) {
    const node = record.nodes[index];
    if (!node || statuses[index] === node.status) continue;
    statuses[index] = node.status;
    into.push({
      type: `step.${nodeStatusLabel(node.status)}`, name: record.name, dagRunId: record.dagRunId, stepName: node.step.name,
      status: node.status, at: at(), startedAt: node.startedAt, finishedAt: node.finishedAt, error: node.error,
    });
  }
  if (runChanged && final) into.push(runEvent(record, at()));
  return { run: record.status, nodes: statuses };
}

/** The events between two records of one run (a status set by hand, a run settled at start). */
export function eventsBetween(before: RunRecord | undefined, after: RunRecord, at: string): EventBody[] {
  const events: EventBody[] = [];
  const seen = before ? { run: before.status, nodes: before.nodes.map((node) => node.status) } : undefined;
  transitionEvents(seen, after, after.nodes.keys(), () => at, events);
  return events;
}

function runEvent(record: RunRecord, at: string): RunEventBody {
  return {
    type: `run.${runStatusLabel(record.status)}`, name: record.name, dagRunId: record.dagRunId, status: record.status, at,
    parentDAGRunId: record.parentDAGRunId, queuedAt: record.queuedAt, startedAt: record.startedAt, finishedAt: record.finishedAt,
  };
}

/** A DAG file's change, as the event log tells it. */
export function dagEvent(change: DagChange, name: string, newName?: string): DagEventBody {
  return { type: `dag.${change}`, name, at: new Date().toISOString(), ...(newName !== undefined ? { newName } : {}) };
}

export function isRunEvent<T extends EventBody>(event: T): event is T & RunEventBody {
  return event.type.startsWith('run.');
}

export function isStepEvent<T extends EventBody>(event: T): event is T & StepEventBody {
  return event.type.startsWith('step.');
}

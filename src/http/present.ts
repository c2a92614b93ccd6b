// Records and models -> the API's JSON shapes (docs/api.md).
import { RunStatus, isoTime, nodeStatusLabel, runStatusLabel, type Dag, type HandlerNodeName, type NodeRecord, type RunRecord, type RunSummaryRow } from '../core/index.ts';
import { conditionView, paramsJson, paramsList, stepView, type ParseResult } from '../definition/index.ts';
import type { DagListing } from '../catalog/index.ts';
import type { QueueListing } from '../scheduler/index.ts';

export function runSummary(record: RunSummaryRow) {
  return {
    rootDAGRunName: record.rootDAGRunName,
    rootDAGRunId: record.rootDAGRunId,
    parentDAGRunName: record.parentDAGRunName,
    parentDAGRunId: record.parentDAGRunId,
    dagRunId: record.dagRunId,
    name: record.name,
    status: record.status,
    statusLabel: runStatusLabel(record.status),
    queuedAt: record.queuedAt,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    log: record.log,
    params: record.params,
  };
}

/** A run in a queue listing: only these fields (as the queue listing shows them). */
function queueEntry(record: RunRecord) {
  return {
    dagRunId: record.dagRunId, name: record.name, status: record.status, statusLabel: runStatusLabel(record.status),
    startedAt: record.startedAt, finishedAt: record.finishedAt, log: record.log,
  };
}

/** A queue, with what each queued run waits for and the oldest one's wait (docs/api.md, Queues). */
export function queueView(queue: QueueListing) {
  return {
    name: queue.name,
    type: queue.type,
    ...(queue.maxConcurrency !== undefined ? { maxConcurrency: queue.maxConcurrency } : {}),
    summary: { running: queue.running.length, queued: queue.queued.length, total: queue.running.length + queue.queued.length },
    runningDAGRuns: queue.running.map(queueEntry),
    queuedDAGRuns: queue.queued.map(({ record, waitingFor }) => ({ ...queueEntry(record), waitingFor })),
    oldestQueuedAgeSec: queue.oldestQueuedAgeMs === undefined ? null : Math.floor(queue.oldestQueuedAgeMs / 1000),
  };
}

export function nodeView(node: NodeRecord) {
  return {
    step: node.step,
    stdout: node.stdout,
    stderr: node.stderr,
    startedAt: node.startedAt,
    finishedAt: node.finishedAt,
    status: node.status,
    statusLabel: nodeStatusLabel(node.status),
    retryCount: node.retryCount,
    doneCount: node.doneCount,
    subRuns: node.subRuns,
    subRunsRepeated: node.subRunsRepeated,
    error: node.error,
  };
}

export function runDetails(record: RunRecord) {
  return { ...runSummary(record), nodes: record.nodes.map(nodeView), ...handlerViews(record), preconditions: [] as unknown[] };
}

/** Handler nodes (docs/api.md): each handler's node, or null when the definition has none. */
function handlerViews(record: RunRecord) {
  const node = (name: HandlerNodeName) => (record.handlers?.[name] ? nodeView(record.handlers[name]!) : null);
  return { onInit: node('onInit'), onSuccess: node('onSuccess'), onFailure: node('onFailure'), onCancel: node('onCancel'), onExit: node('onExit') };
}

/** JSON of each node record: a transition replaces the nodes it changes and keeps the others. */
const nodeJson = new WeakMap<NodeRecord, Buffer>();
const COMMA = Buffer.from(',');
const NODES_OPEN = Buffer.from(',"nodes":[');
const NODES_CLOSE = Buffer.from('],');
const PRECONDITIONS_CLOSE = Buffer.from('"preconditions":[]}');

/**
 * `JSON.stringify(runDetails(record))` as pieces of bytes, encoding only the nodes that changed
 * since the record's previous version: a client polling a run of many steps costs one node per
 * transition, and no large string on the heap.
 */
export function runDetailsParts(record: RunRecord): Buffer[] {
  const summary = JSON.stringify(runSummary(record));
  const parts: Buffer[] = [Buffer.from(summary.slice(0, -1)), NODES_OPEN];
  record.nodes.forEach((node, index) => {
    let bytes = nodeJson.get(node);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(nodeView(node)));
      nodeJson.set(node, bytes);
    }
    if (index > 0) parts.push(COMMA);
    parts.push(bytes);
  });
  parts.push(NODES_CLOSE, Buffer.from(JSON.stringify(handlerViews(record)).slice(1, -1)), COMMA, PRECONDITIONS_CLOSE);
  return parts;
}

/** metadata.status of the outputs document: succeeded, failed or aborted; empty while the run is active. */
function outcomeLabel(status: RunStatus): string {
  if (status === RunStatus.Succeeded || status === RunStatus.PartiallySucceeded) return 'succeeded';
  if (status === RunStatus.Failed) return 'failed';
  if (status === RunStatus.Aborted) return 'aborted';
  return '';
}

/** The run outputs document. */
export function outputsDocument(record: RunRecord) {
  return {
    metadata: {
      dagName: record.name,
      dagRunId: record.dagRunId,
      attemptId: record.attemptId,
      status: outcomeLabel(record.status),
      completedAt: record.finishedAt,
      params: record.params,
    },
    outputs: record.outputs ?? {},
  };
}

/** The summary of a DAG that has never run: its name and status 0, the other fields empty. */
export function emptyRunSummary(name: string) {
  return {
    rootDAGRunName: '', rootDAGRunId: '', parentDAGRunName: '', parentDAGRunId: '', dagRunId: '', name,
    status: 0, statusLabel: 'not_started', queuedAt: '', startedAt: '', finishedAt: '', log: '', params: '',
  };
}

/** The details of a DAG that has never run: the empty summary, no nodes, no handler nodes. */
export function emptyRunDetails(name: string) {
  return { ...emptyRunSummary(name), nodes: [], onInit: null, onSuccess: null, onFailure: null, onCancel: null, onExit: null, preconditions: [] };
}

/** A DAG's next scheduled run (troupe): an ISO 8601 UTC time, or null when none is scheduled. */
export function nextRunView(ms: number | undefined): string | null {
  return ms === undefined ? null : isoTime(ms);
}

/** The `dag` of list items and search results. */
export function dagSummary(dag: DagListing | undefined, fileName: string) {
  if (!dag) return { name: fileName, group: '', schedule: [], description: '', params: [], defaultParams: '', tags: [] };
  return {
    name: dag.name,
    group: dag.group ?? '',
    schedule: dag.schedule.start.map(({ expression }) => ({ expression })),
    description: dag.description ?? '',
    params: paramsList(dag.params),
    defaultParams: paramsJson(dag.params),
    tags: dag.tags,
  };
}

/** The `dag` of DAG details and validation results. */
export function dagDetails(dag: Dag) {
  return {
    ...dagSummary(dag, dag.name),
    env: dag.env.map(([key, value]) => `${key}=${value}`),
    logDir: dag.logDir ?? '',
    handlerOn: handlersView(dag),
    steps: dag.steps.map(stepView),
    delay: dag.delaySec,
    histRetentionDays: dag.histRetentionDays,
    preconditions: dag.preconditions.map(conditionView),
    maxActiveRuns: dag.maxActiveRuns,
    maxActiveSteps: dag.maxActiveSteps,
    timeoutSec: dag.timeoutSec,
    maxCleanUpTimeSec: dag.maxCleanUpTimeSec,
    type: dag.type,
    workingDir: dag.workingDir,
  };
}

/** handlerOn with Dagu's keys: `cancel` for the abort handler. */
function handlersView(dag: Dag) {
  const { init, success, failure, abort, exit } = dag.handlerOn;
  const entries = Object.entries({ init, success, failure, cancel: abort, exit }).filter(([, step]) => step !== undefined);
  return Object.fromEntries(entries.map(([key, step]) => [key, stepView(step!)]));
}

export function localDagsOf(result: ParseResult) {
  return result.localDags.map((local) => ({ name: local.name, dag: local.dag ? dagDetails(local.dag) : { name: local.name }, errors: local.errors }));
}

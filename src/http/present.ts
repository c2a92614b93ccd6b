// Records and models -> the API's JSON shapes (docs/api.md).
import { setImmediate as nextTurn } from 'node:timers/promises';
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
    // The worker that ran it (distributed dispatch), as Dagu names it.
    ...(record.workerId !== undefined ? { workerId: record.workerId } : {}),
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
    queuedDAGRuns: queue.queued.map(({ record, waitingFor, workerSelector }) => ({ ...queueEntry(record), waitingFor, ...(workerSelector ? { workerSelector } : {}) })),
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

/**
 * Handler nodes (docs/api.md): each handler's node, or null when the definition has none. The init
 * handler's is not among them, as in Dagu's run details and the specification's list.
 */
function handlerViews(record: RunRecord) {
  const node = (name: HandlerNodeName) => (record.handlers?.[name] ? nodeView(record.handlers[name]!) : null);
  return { onSuccess: node('onSuccess'), onFailure: node('onFailure'), onCancel: node('onCancel'), onExit: node('onExit') };
}

/**
 * Nodes are encoded in blocks of this many: a transition changes one or two nodes, so a poll of a
 * running run re-encodes one or two blocks, and the answer is put together from a few dozen pieces
 * of bytes, not one per node (10,000 pieces cost more to copy together than to encode).
 */
export const NODE_BLOCK = 256;

interface NodeBlock {
  /** The node records it was encoded from: a block is current while each is still the same object. */
  nodes: NodeRecord[];
  bytes: Buffer;
}

/** Each block by its first node (records are never changed: a transition makes new node objects). */
const nodeBlocks = new WeakMap<NodeRecord, NodeBlock>();
let blocksEncoded = 0;

/** How many node blocks were encoded so far (tests count the work a read or a transition costs). */
export function nodeBlocksEncoded(): number {
  return blocksEncoded;
}

/**
 * A string's UTF-8 bytes. JSON of ASCII text (every byte count equal to its length) is copied as
 * Latin-1, which is the same bytes: Node 20's UTF-8 encoder took 25 ms for 6 MB of node JSON where
 * the copy takes about 1 ms.
 */
function jsonBytes(text: string): Buffer {
  return Buffer.from(text, Buffer.byteLength(text) === text.length ? 'latin1' : 'utf8');
}

function blockOf(nodes: readonly NodeRecord[], from: number): Buffer {
  const to = Math.min(from + NODE_BLOCK, nodes.length);
  const kept = nodeBlocks.get(nodes[from]);
  if (kept && kept.nodes.length === to - from && kept.nodes.every((node, offset) => node === nodes[from + offset])) return kept.bytes;
  const block = nodes.slice(from, to);
  // One stringify of the block's array, its brackets dropped: V8's fast path, not a call per node.
  const bytes = jsonBytes(JSON.stringify(block.map(nodeView)).slice(1, -1));
  nodeBlocks.set(nodes[from], { nodes: block, bytes });
  blocksEncoded++;
  return bytes;
}

const COMMA = Buffer.from(',');
const NODES_OPEN = Buffer.from(',"nodes":[');
const NODES_CLOSE = Buffer.from('],');
const PRECONDITIONS_CLOSE = Buffer.from('"preconditions":[]}');

/** The run's details as pieces of bytes: its summary, its blocks of nodes (each kept while its nodes are), its handlers. */
function* detailsPieces(record: RunRecord): Generator<Buffer, void, void> {
  yield Buffer.from(JSON.stringify(runSummary(record)).slice(0, -1));
  yield NODES_OPEN;
  for (let from = 0; from < record.nodes.length; from += NODE_BLOCK) {
    if (from > 0) yield COMMA;
    yield blockOf(record.nodes, from);
  }
  yield NODES_CLOSE;
  yield Buffer.from(JSON.stringify(handlerViews(record)).slice(1, -1));
  yield COMMA;
  yield PRECONDITIONS_CLOSE;
}

/**
 * `JSON.stringify(runDetails(record))` as pieces of bytes, encoding only the blocks of nodes that
 * changed since the record's previous version.
 */
export function runDetailsParts(record: RunRecord): Buffer[] {
  return [...detailsPieces(record)];
}

/** Blocks encoded between two turns of the event loop: about 1,000 nodes, a few milliseconds. */
const BLOCKS_PER_TURN = 4;

/** runDetailsParts, yielding to the event loop between blocks it has to encode (a record never changes: the answer is the same). */
async function runDetailsPartsInTurns(record: RunRecord): Promise<Buffer[]> {
  const parts: Buffer[] = [];
  let turnStartedAt = blocksEncoded;
  for (const piece of detailsPieces(record)) {
    parts.push(piece);
    if (blocksEncoded - turnStartedAt >= BLOCKS_PER_TURN) {
      await nextTurn();
      turnStartedAt = blocksEncoded;
    }
  }
  return parts;
}

/** Documents by key list, by record: a record object is never changed, a new write is a new object. */
const documents = new Map<string, WeakMap<RunRecord, Buffer>>();

/**
 * `JSON.stringify({ [key]: runDetails(record), ... })` for each of `keys`, as bytes, kept while the
 * record lives: repeated reads of an unchanged run cost nothing but the write to the socket. The
 * nodes left to encode (a large run read for the first time) are encoded a few blocks per turn of
 * the event loop, so that other requests are answered meanwhile.
 */
export async function runDetailsDocument(record: RunRecord, keys: readonly string[]): Promise<Buffer> {
  const signature = keys.join(',');
  let kept = documents.get(signature);
  if (!kept) documents.set(signature, kept = new WeakMap());
  let body = kept.get(record);
  if (body === undefined) {
    body = detailsDocumentOf(await runDetailsPartsInTurns(record), keys);
    kept.set(record, body);
  }
  return body;
}

/** The document of `keys`, each holding the same details (the bytes of runDetailsParts). */
export function detailsDocumentOf(details: readonly Uint8Array[], keys: readonly string[]): Buffer {
  const parts: Uint8Array[] = [];
  keys.forEach((key, index) => parts.push(Buffer.from(`${index === 0 ? '{' : ','}${JSON.stringify(key)}:`), ...details));
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
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
  return { ...emptyRunSummary(name), nodes: [], onSuccess: null, onFailure: null, onCancel: null, onExit: null, preconditions: [] };
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

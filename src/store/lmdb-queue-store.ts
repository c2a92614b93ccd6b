// QueueStore on LMDB, in the run store's environment: an item and its run's record change in one
// transaction (LmdbRunStore.saveAlongside). Decides nothing: admission and dispatch are the scheduler's.
import type { Database } from 'lmdb';
import {
  AppError, NodeStatus, RunStatus, dagRunIdProblem, dagNameProblem, isFinalRunStatus, queueNameProblem,
  type EventBody, type QueueItem, type QueueStore, type QueueSummary, type RunRecord,
} from '../core/index.ts';
import { keys } from './keys.ts';
import { alongside } from './storage-full.ts';
import { runKey, type LmdbRunStore } from './lmdb-run-store.ts';

type Key = Array<string | number>;

export class LmdbQueueStore implements QueueStore {
  private readonly stored: Database<QueueItem, Key>;
  /** Where a run's item is: its queue and sequence number. */
  private readonly itemOf: Database<[string, number], Key>;
  private readonly meta: Database<number, Key>;
  /**
   * The items by queue, each queue's in its order, as of the last call (its writes may still be
   * committing), so that reads cost no scan and no decode (Maps: queue names and run ids are input,
   * never object keys).
   */
  private readonly lines = new Map<string, Map<string, QueueItem>>();
  private readonly byRun = new Map<string, QueueItem>();
  /** The last sequence number given: every enqueue takes the next, across restarts too. */
  private lastSeq: number;

  constructor(private readonly runs: LmdbRunStore) {
    const env = runs.environment;
    this.stored = env.openDB({ name: 'queue-items' });
    this.itemOf = env.openDB({ name: 'queue-items-by-run' });
    this.meta = env.openDB({ name: 'queue-meta' });
    // Keys sort by queue, then sequence: each queue's items load in their order.
    for (const { value } of this.stored.getRange()) this.add(Object.freeze(value));
    this.lastSeq = this.meta.get(keys.queueSequence()) ?? 0;
  }

  enqueue(record: RunRecord, request: { queue: string; spec: string; params?: string; fileName?: string }, events: readonly EventBody[] = []): Promise<QueueItem> {
    const problem = queueNameProblem(request.queue) ?? dagNameProblem(record.name) ?? dagRunIdProblem(record.dagRunId) ?? notQueueable(record);
    if (problem) return Promise.reject(new AppError('bad_request', problem));
    const { queue, params, fileName } = request;
    const { name, dagRunId } = record;
    if (this.byRun.has(runKey(name, dagRunId)) || this.runs.get(name, dagRunId)) {
      return Promise.reject(new AppError('already_exists', `dag-run ID ${dagRunId} already exists for DAG ${name}`));
    }
    // A record that cannot be encoded is refused before anything is written: plain writes are not
    // rolled back (JSON's rules are stricter than the store's encoding).
    try {
      JSON.stringify(record);
    } catch (error) {
      return Promise.reject(error);
    }
    // Decided here and now: the item is in the reads at once, and its writes are plain writes of
    // this tick, in call order with every other write (docs/architecture.md, The queue store).
    const seq = ++this.lastSeq;
    const item: QueueItem = Object.freeze({
      queue, name, dagRunId, seq, enqueuedAtMs: Date.parse(record.queuedAt),
      ...(params !== undefined ? { params } : {}),
      ...(fileName !== undefined ? { fileName } : {}),
    });
    this.add(item);
    return this.runs.saveAlongside(record, () => {
      alongside(this.meta.put(keys.queueSequence(), seq));
      alongside(this.stored.put(keys.queueItem(queue, seq), item));
      alongside(this.itemOf.put(keys.queueItemOf(name, dagRunId), [queue, seq]));
    }, request.spec, events).then(() => item, (error: unknown) => {
      this.drop(item);
      throw error;
    });
  }

  dispatch(record: RunRecord, events: readonly EventBody[] = []): Promise<QueueItem> {
    if (record.status !== RunStatus.Running) return Promise.reject(new AppError('bad_request', 'a dispatched run is recorded running'));
    return this.leave(record, events);
  }

  dequeue(record: RunRecord, events: readonly EventBody[] = []): Promise<QueueItem> {
    if (!isFinalRunStatus(record.status)) return Promise.reject(new AppError('bad_request', 'a run that leaves its queue without running is recorded finished'));
    return this.leave(record, events);
  }

  /**
   * The run's item removed and its record written in one transaction, if the run is still queued.
   * Decided here and now, from the items in memory: a second dispatch or dequeue of the run is
   * not_found at once, and the writes go in call order with every other write (no child
   * transaction, whose callback could run after writes issued later: see docs/architecture.md).
   */
  private leave(record: RunRecord, events: readonly EventBody[]): Promise<QueueItem> {
    const { name, dagRunId } = record;
    const notQueued = () => new AppError('not_found', `dag-run ${dagRunId} of DAG ${name} is not queued`);
    const item = this.byRun.get(runKey(name, dagRunId));
    if (!item) return Promise.reject(notQueued());
    // The listing indexes are keyed by creation time: a record that moved it would be listed twice.
    const stored = this.runs.get(name, dagRunId);
    if (stored && stored.createdAtMs !== record.createdAtMs) {
      return Promise.reject(new Error(`dag-run ${dagRunId} of DAG ${name} must keep the createdAtMs it was queued with`));
    }
    this.drop(item);
    return this.runs.saveAlongside(record, () => {
      alongside(this.stored.remove(keys.queueItem(item.queue, item.seq)));
      alongside(this.itemOf.remove(keys.queueItemOf(name, dagRunId)));
    }, undefined, events).then(() => item, (error: unknown) => {
      this.add(item);
      throw error;
    });
  }

  items(queue: string): QueueItem[] {
    return [...(this.lines.get(queue)?.values() ?? [])];
  }

  head(queue: string): QueueItem | undefined {
    return this.lines.get(queue)?.values().next().value;
  }

  find(name: string, dagRunId: string): QueueItem | undefined {
    return this.byRun.get(runKey(name, dagRunId));
  }

  queues(): QueueSummary[] {
    return [...this.lines.keys()].sort().map((queue) => {
      const line = this.lines.get(queue)!;
      return { queue, queued: line.size, oldestEnqueuedAtMs: line.values().next().value!.enqueuedAtMs };
    });
  }

  size(queue?: string): number {
    return queue === undefined ? this.byRun.size : this.lines.get(queue)?.size ?? 0;
  }

  oldestAgeMs(queue: string, nowMs: number): number | undefined {
    const oldest = this.head(queue);
    return oldest && Math.max(0, nowMs - oldest.enqueuedAtMs);
  }

  private add(item: QueueItem): void {
    // Items arrive in sequence: loaded in key order, then in call order (an item whose leaving
    // failed comes back at the end).
    let line = this.lines.get(item.queue);
    if (!line) this.lines.set(item.queue, (line = new Map()));
    const key = runKey(item.name, item.dagRunId);
    line.set(key, item);
    this.byRun.set(key, item);
  }

  private drop(removed: QueueItem): QueueItem {
    const key = runKey(removed.name, removed.dagRunId);
    const item = this.byRun.get(key) ?? Object.freeze(removed);
    this.byRun.delete(key);
    const line = this.lines.get(item.queue);
    line?.delete(key);
    if (line?.size === 0) this.lines.delete(item.queue);
    return item;
  }
}

/** Why `record` is not a queued run's record, if it is not. */
function notQueueable(record: RunRecord): string | undefined {
  if (record.status !== RunStatus.Queued) return 'a queued run is recorded with status queued';
  if (!Number.isFinite(Date.parse(record.queuedAt))) return 'a queued run has its queuedAt time';
  if (record.startedAt !== '' || record.finishedAt !== '') return 'a queued run has not started';
  if (record.nodes.some((node) => node.status !== NodeStatus.NotStarted || node.startedAt !== '' || node.finishedAt !== '')) {
    return 'the nodes of a queued run have not started';
  }
  return undefined;
}

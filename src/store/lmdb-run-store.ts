// RunStore on LMDB: run records, the listing indexes, run specs and DAG flags in one environment.
// A run is stored as a summary, one entry per node and its step views (written once): a transition
// writes the summary and the nodes it changed, not the whole run, and looks only at those.
// The queue store shares the environment (its databases change with a run's record: saveAlongside).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { open, type Database, type RootDatabase } from 'lmdb';
import { RunStatus, dagRunIdProblem, type EngineEvent, type EventBody, isFinalRunStatus, type NodeRecord, type ListPosition, type RunFilter, type RunLocation, type RunRecord, type RunStore, type RunSummaryRow, type StepView, type SummaryPage } from '../core/index.ts';
import { already, encodeAhead, encoderOf, type EncodedRecord } from './encode-ahead.ts';
import { fillStatusIndex } from './status-index.ts';
import { clearWrittenAhead, markWrittenAhead, sweepWrittenAhead } from './written-ahead.ts';
import { keys } from './keys.ts';
import { couldExist, readNodes, recordOf as storedRecord, type Key, type ReadTransaction, type StoredNode, type StoredRun } from './stored-runs.ts';
import { LmdbEventLog } from './lmdb-event-log.ts';
import { listSummaries } from './run-listing.ts';
import { StoreProbe } from './store-probe.ts';
import { CommitOrder } from './commit-order.ts';
import { alongside, letCommitFailuresPass, lmdbWrite, storageError } from './storage-full.ts';
import { errorText, log } from '../logging/index.ts';

const COMMITTED_CACHE_SIZE = 256;
/** Nodes read() decodes per turn of the event loop: a few milliseconds. */
const NODES_PER_TURN = 1000;
/** Latest runs kept by name between two writes: a DAG list's pages. */
const LATEST_KEPT = 4096;
const ISSUED_CACHE_SIZE = 1024;
/**
 * A final record is committed on the main thread only while such commits take at most this long
 * on average; on a slower disk each would hold every other request back. Past it, final records go
 * through the writer thread too, and the main thread tries again after the pause. Each commit
 * counts for at most three times the limit, so a single stall (a page fault, the host taking the
 * core) does not trip it: only a run of slow commits does.
 */
const MAIN_THREAD_COMMIT_MAX_MS = 1;
const MAIN_THREAD_COMMIT_PAUSE_MS = 10_000;

const recordOf = (record: RunRecord) => `the record of dag-run ${record.dagRunId} of DAG ${record.name}`;

/** A run's key in the in-memory maps (here and in the queue store). */
export const runKey = (name: string, dagRunId: string) => `${name}\u0000${dagRunId}`;

/** Sets `id` as the newest entry of an insertion-ordered cache, dropping the oldest past `size`. */
function setNewest(cache: Map<string, RunRecord>, id: string, record: RunRecord, size: number): void {
  cache.delete(id);
  cache.set(id, record);
  if (cache.size > size) cache.delete(cache.keys().next().value!);
}

function firstOf<T>(items: Iterable<T>): T | undefined {
  for (const item of items) return item;
  return undefined;
}

export class LmdbRunStore implements RunStore {
  private readonly root: RootDatabase;
  private readonly runs: Database<StoredRun, Key>;
  private readonly nodes: Database<StoredNode, Key>;
  private readonly specs: Database<string, Key>;
  private readonly byTime: Database<null, Key>;
  private readonly byName: Database<null, Key>;
  /** [status, createdAtMs, name, dagRunId]: a status filter reads its own runs, not every run. */
  private readonly byStatus: Database<null, Key>;
  private readonly flags: Database<unknown, Key>;
  /** The step objects of a run's nodes never change during a run: stored once, not on every write. */
  private readonly stepViews: Database<StepView[], Key>;
  /**
   * The last record written for recently written runs: the next write of a run compares its nodes
   * (those it says it changed, or else all) with these (records are immutable; a changed node is a
   * new object) and skips the index rows. A run not found here is written whole.
   */
  private readonly issued = new Map<string, RunRecord>();
  /**
   * The last committed record of recently written runs. Reads of a run being polled skip the
   * decode; the entry changes only when a write commits, so nothing shows before it is durable.
   */
  private readonly committed = new Map<string, RunRecord>();
  /** First records encoded before their save (prepareFirstSave), until it issues their writes. */
  private readonly encoded = new WeakMap<RunRecord, EncodedRecord>();
  /** Moves on every committed write of a run or removal: an answer made from the runs before it is stale. */
  private generation = 0;
  private latestByName = { generation: -1, byName: new Map<string, { row: RunSummaryRow | undefined }>() };
  /** Writes handed to LMDB's writer thread and not yet committed. */
  private writesInFlight = 0;
  private readonly order = new CommitOrder();
  private mainThreadCommitMs = 0;
  private mainThreadCommitsPausedUntil = 0;
  private readonly probe: StoreProbe;
  /** What happened, numbered in the commits of the records it describes. */
  readonly events: LmdbEventLog;

  /** `scratch`: commits are not synced to disk (a worker's own store, which its server's records outlive). */
  constructor(private readonly path: string, { scratch = false } = {}) {
    letCommitFailuresPass(path, (error) => log.error({ error: errorText(error) }, 'a write could not be stored: the disk is full'));
    this.root = open({ path, maxDbs: 32, ...(scratch ? { noSync: true } : {}) });
    this.runs = this.root.openDB({ name: 'runs' });
    this.nodes = this.root.openDB({ name: 'run-nodes' });
    this.specs = this.root.openDB({ name: 'specs' });
    this.byTime = this.root.openDB({ name: 'runs-by-time' });
    this.byName = this.root.openDB({ name: 'runs-by-name' });
    this.byStatus = this.root.openDB({ name: 'runs-by-status' });
    this.flags = this.root.openDB({ name: 'flags' });
    this.stepViews = this.root.openDB({ name: 'run-steps' });
    this.events = new LmdbEventLog(this.root, this.flags);
    fillStatusIndex(this.root, this.runs, this.byStatus, this.flags);
    const orphaned = sweepWrittenAhead({ flags: this.flags, runs: this.runs, nodes: this.nodes }, (write) => void this.committing(write, 'the removal of rows of runs never saved'));
    if (orphaned > 0) log.warn({ runs: orphaned }, 'removed the node rows of runs whose start never committed');
    this.probe = new StoreProbe((value) => this.committing(this.flags.put(keys.probe(), value), 'the health probe'), () => this.flags.get(keys.probe()));
  }

  get(name: string, dagRunId: string): RunRecord | undefined {
    const hot = this.committed.get(runKey(name, dagRunId));
    if (hot) return hot;
    if (!couldExist(name, dagRunId)) return undefined;
    const stored = this.runs.get(keys.run(name, dagRunId));
    if (!stored) return undefined;
    const nodes: NodeRecord[] = [];
    this.readNodes(name, dagRunId, stored, this.stepViews.get(keys.run(name, dagRunId)) ?? [], nodes, stored.nodeCount);
    return this.decoded(stored, nodes);
  }

  /**
   * get(), decoding NODES_PER_TURN nodes per turn of the event loop: a run of 10,000 steps read
   * from the disk (after a restart) took the main thread for 0.1 - 0.4 s in one piece. Every read
   * uses one read transaction, so the run is read as one commit left it.
   */
  async read(name: string, dagRunId: string): Promise<RunRecord | undefined> {
    const hot = this.committed.get(runKey(name, dagRunId));
    if (hot) return hot;
    if (!couldExist(name, dagRunId)) return undefined;
    const transaction = this.root.useReadTransaction();
    try {
      const stored = this.runs.get(keys.run(name, dagRunId), { transaction });
      if (!stored) return undefined;
      const nodes: NodeRecord[] = [];
      const views = this.stepViews.get(keys.run(name, dagRunId), { transaction }) ?? [];
      while (nodes.length < stored.nodeCount) {
        // A small run is read at once; a large one yields before each slice.
        if (stored.nodeCount > NODES_PER_TURN) await nextTurn();
        // A write of the run committed meanwhile made its record the committed one.
        const meanwhile = this.committed.get(runKey(name, dagRunId));
        if (meanwhile) return meanwhile;
        const before = nodes.length;
        this.readNodes(name, dagRunId, stored, views, nodes, NODES_PER_TURN, transaction);
        if (nodes.length === before) break;
      }
      return this.decoded(stored, nodes);
    } finally {
      transaction.done();
    }
  }

  /** Appends up to `limit` nodes of a stored run to `nodes` (stored-runs.ts). */
  private readNodes(name: string, dagRunId: string, stored: StoredRun, views: StepView[], nodes: NodeRecord[], limit: number, transaction?: ReadTransaction): void {
    readNodes({ runs: this.runs, nodes: this.nodes, stepViews: this.stepViews }, name, dagRunId, stored, views, nodes, limit, transaction);
  }

  /**
   * Where a run is, without decoding its nodes: its record when this store holds it in memory,
   * else what its stored summary row says, and the row's bytes (every write of the run writes
   * the row: the version a reader on another thread read, StoredRunReader).
   */
  locate(name: string, dagRunId: string): RunLocation | undefined {
    const hot = this.committed.get(runKey(name, dagRunId));
    if (hot) return { held: hot };
    if (!couldExist(name, dagRunId)) return undefined;
    const version = this.runs.getBinary(keys.run(name, dagRunId));
    const stored = this.runs.get(keys.run(name, dagRunId));
    if (!version || !stored) return undefined;
    return { stored: { nodeCount: stored.nodeCount, status: stored.status, version } };
  }

  private decoded(stored: StoredRun, nodes: NodeRecord[]): RunRecord {
    const record = storedRecord(stored, nodes);
    // Kept as the run's committed record when no write of it is under way: the next read of a
    // finished run (its details polled, a run of 10,000 steps) is the same object, neither decoded
    // again nor presented again (the API keeps what it rendered by record).
    const id = runKey(record.name, record.dagRunId);
    if (!this.issued.has(id)) setNewest(this.committed, id, record, COMMITTED_CACHE_SIZE);
    return record;
  }

  latest(name: string): RunRecord | undefined {
    return this.listByName(name, 1)[0];
  }

  listByName(name: string, limit: number): RunRecord[] {
    if (!couldExist(name)) return [];
    return this.summaries({ name }, { limit }).runs.map((row) => this.get(name, row.dagRunId)).filter((record) => record !== undefined);
  }

  /** The runs that match, whole: the index picks them (a status's runs at recovery, not every run). */
  list(filter: RunFilter): RunRecord[] {
    return this.summaries(filter).runs.map((row) => this.get(row.name, row.dagRunId)).filter((record) => record !== undefined);
  }

  /**
   * The runs that match `filter`, newest first, as summary rows (no nodes are read): every match,
   * or a page of at most `page.limit` after `page.after`.
   */
  summaries(filter: RunFilter, page?: { limit: number; after?: ListPosition }): SummaryPage {
    if (filter.name !== undefined && !couldExist(filter.name)) return { runs: [] };
    // An id no run can have is read from no index (a key too long for LMDB would throw).
    if (filter.dagRunId !== undefined && dagRunIdProblem(filter.dagRunId) !== undefined) return { runs: [] };
    return listSummaries({ byTime: this.byTime, byName: this.byName, byStatus: this.byStatus, summary: (name, dagRunId) => this.summary(name, dagRunId), runNames: () => this.runNames() }, filter, page);
  }

  /** The newest run of `name` that is not a sub DAG run, as its summary row. */
  latestSummary(name: string): RunSummaryRow | undefined {
    // Each DAG list item asks for one: between two writes, the same answers.
    const generation = this.runsGeneration;
    if (generation === undefined) return this.summaries({ name }, { limit: 1 }).runs[0];
    if (this.latestByName.generation !== generation) this.latestByName = { generation, byName: new Map() };
    const known = this.latestByName.byName.get(name);
    if (known) return known.row;
    const row = this.summaries({ name }, { limit: 1 }).runs[0];
    if (this.latestByName.byName.size < LATEST_KEPT) this.latestByName.byName.set(name, { row });
    return row;
  }

  private summary(name: string, dagRunId: string): RunSummaryRow | undefined {
    const hot = this.committed.get(runKey(name, dagRunId));
    if (hot) return hot;
    const stored = this.runs.get(keys.run(name, dagRunId));
    if (!stored) return undefined;
    const { nodeCount: _nodeCount, ...summary } = stored;
    return summary;
  }

  /**
   * The node rows of a run the store has no record of are written here, and durable before this
   * resolves: no reader finds them before the run's summary row, which its save writes (a crash
   * or a refused start leaves rows nothing reads, removed with any run of that id). A retry's or a
   * queued run's stored nodes are replaced only by its save, in the transaction of its record.
   */
  async prepareFirstSave(record: RunRecord): Promise<void> {
    if (record.nodes.length <= NODES_PER_TURN) return;
    const { name, dagRunId } = record;
    const stored = this.issued.has(runKey(name, dagRunId)) || this.runs.get(keys.run(name, dagRunId)) !== undefined;
    const put = stored ? undefined : (index: number, value: unknown) => this.nodes.put(keys.node(name, dagRunId, index), already<StoredNode>(value));
    if (put) void this.committing(markWrittenAhead(this.flags, name, dagRunId), recordOf(record));
    const encoded = await this.committing(encodeAhead(record, { node: encoderOf(this.nodes), steps: encoderOf(this.stepViews) }, NODES_PER_TURN, put), recordOf(record));
    if (encoded) this.encoded.set(record, encoded);
  }

  save(record: RunRecord, changedNodes?: Iterable<number>, events: readonly EventBody[] = []): Promise<void> {
    const id = runKey(record.name, record.dagRunId);
    const previous = this.issued.get(id);
    setNewest(this.issued, id, record, ISSUED_CACHE_SIZE);
    // A run's final record is what its waiting clients poll for, and nothing of the run is left to
    // overlap its commit with: with no other write in flight it commits here, synchronously,
    // without the writer thread's round trip (a turn of the event loop and two thread wake-ups;
    // the one-step latency's p50 fell by 0.3 - 0.6 ms side by side on a slow 2-core VM). Other
    // records go to the writer thread, so that their commits overlap the steps they start (a run's
    // first record commits while its first steps spawn).
    if (isFinalRunStatus(record.status) && this.writesInFlight === 0 && Date.now() >= this.mainThreadCommitsPausedUntil) {
      return this.commitOnMainThread(id, record, previous, changedNodes, events);
    }
    // Puts issued in the same tick commit in one transaction, in call order: a reader never sees
    // half a transition, and the index never names a missing run.
    const staged = this.events.stage(events);
    return this.order.follow(this.committing(this.putRecord(record, previous, changedNodes), recordOf(record)), () => this.remember(id, record, staged));
  }

  private commitOnMainThread(id: string, record: RunRecord, previous: RunRecord | undefined, changedNodes: Iterable<number> | undefined, events: readonly EventBody[]): Promise<void> {
    const started = performance.now();
    let staged: EngineEvent[] = [];
    try {
      this.root.transactionSync(() => {
        staged = this.events.stage(events);
        void this.putRecord(record, previous, changedNodes);
      });
    } catch (error) {
      this.issued.clear();
      return Promise.reject(storageError(error, recordOf(record), this.path));
    }
    this.order.flush();
    const ms = Math.min(performance.now() - started, 3 * MAIN_THREAD_COMMIT_MAX_MS);
    this.mainThreadCommitMs = this.mainThreadCommitMs * 0.9 + ms * 0.1;
    if (this.mainThreadCommitMs > MAIN_THREAD_COMMIT_MAX_MS) {
      this.mainThreadCommitsPausedUntil = Date.now() + MAIN_THREAD_COMMIT_PAUSE_MS;
      this.mainThreadCommitMs = 0;
    }
    this.remember(id, record, staged);
    return Promise.resolve();
  }

  /** The puts of one transition: the nodes that changed, the index rows of a new run, the summary. */
  private putRecord(record: RunRecord, previous: RunRecord | undefined, changedNodes: Iterable<number> | undefined): Promise<boolean> {
    // Comparing every node on every write made a run of 10,000 steps quadratic: the writer says
    // which nodes it changed since the record it wrote before, which this one follows.
    const candidates = previous && changedNodes ? changedNodes : record.nodes.keys();
    const encoded = this.encoded.get(record);
    this.encoded.delete(record);
    // Written ahead (prepareFirstSave): the same nodes, durable already.
    const writtenAhead = !previous && encoded !== undefined && encoded.nodes === undefined;
    for (const index of writtenAhead ? [] : candidates) {
      const node = record.nodes[index];
      if (previous?.nodes[index] === node) continue;
      const { step: _step, ...stored } = node;
      alongside(this.nodes.put(keys.node(record.name, record.dagRunId, index), encoded?.nodes ? already<StoredNode>(encoded.nodes[index]) : stored));
    }
    if (!previous) {
      if (record.nodes.length > NODES_PER_TURN) alongside(clearWrittenAhead(this.flags, record.name, record.dagRunId));
      alongside(this.stepViews.put(keys.run(record.name, record.dagRunId), encoded ? already<StepView[]>(encoded.steps) : record.nodes.map((node) => node.step)));
      alongside(this.byTime.put(keys.byTime(record.createdAtMs, record.name, record.dagRunId), null));
      alongside(this.byName.put(keys.byName(record.name, record.createdAtMs, record.dagRunId), null));
    }
    // Without the previous record at hand (the run's first write, or one that left the cache) the
    // stored row tells the status its index row has; the first write finds none.
    // A row put again is harmless; one missing would hide the run from its status's listing.
    if (previous?.status !== record.status) {
      const before = previous ?? this.runs.get(keys.run(record.name, record.dagRunId));
      if (before && before.status !== record.status) alongside(this.byStatus.remove(keys.byStatus(before.status, before.createdAtMs, record.name, record.dagRunId)));
      alongside(this.byStatus.put(keys.byStatus(record.status, record.createdAtMs, record.name, record.dagRunId), null));
    }
    const { nodes, ...summary } = record;
    return this.runs.put(keys.run(record.name, record.dagRunId), { ...summary, nodeCount: nodes.length });
  }

  /**
   * A write handed to the writer thread. One that fails (a full disk) makes every later write of a
   * run whole: writes issued since compared their nodes with records that were never stored.
   */
  private committing<T>(write: Promise<T>, what: string): Promise<T> {
    return this.track(lmdbWrite(write, what, this.path).catch((error: unknown) => {
      this.issued.clear();
      throw error;
    }));
  }

  /** Counts a write while the writer thread has it: a final record commits here only with none. */
  private track<T>(write: Promise<T>): Promise<T> {
    this.writesInFlight++;
    const done = () => { this.writesInFlight--; };
    write.then(done, done);
    return write;
  }

  /** Told in issue order (commit-order.ts), so the entry always ends at the newest record. */
  private remember(id: string, record: RunRecord, events: readonly EngineEvent[]): void {
    setNewest(this.committed, id, record, COMMITTED_CACHE_SIZE);
    this.generation++;
    this.events.committed(events);
  }

  /**
   * Removes events older than `beforeMs`, and the oldest past `maxCount` (0: no count limit), a
   * batch per write so that no commit holds the writer long; resolves with how many went.
   */
  async pruneEvents(beforeMs: number, maxCount: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const batch = this.events.pruneBatch(beforeMs, maxCount);
      if (!batch.written) return removed;
      await this.committing(batch.written, 'the removal of old events');
      removed += batch.removed;
    }
  }

  /** Events that describe no run record (a DAG file changed, a queue's limit), committed on their own. */
  appendEvents(bodies: readonly EventBody[]): Promise<void> {
    const staged = this.events.stage(bodies);
    const last = staged.length > 0 ? this.events.lastWrite : Promise.resolve(true);
    return this.order.follow(this.committing(last, 'events'), () => this.events.committed(staged));
  }

  /**
   * Undefined while a write is in flight: LMDB shows a commit to readers before its promise
   * settles (and the generation moves), so an answer made then could outlive what it showed.
   */
  get runsGeneration(): number | undefined {
    return this.writesInFlight === 0 ? this.generation : undefined;
  }

  /** The LMDB environment, for the stores that share it (the queue store). */
  get environment(): RootDatabase {
    return this.root;
  }

  /**
   * For the queue store: `record`, then the writes `alongside` makes and `spec`, as plain writes
   * issued in this tick, so they commit in one transaction and in call order with every other
   * write (never on the main thread ahead of earlier writes). The caller has decided and made sure
   * the record encodes: nothing is checked here.
   */
  saveAlongside(record: RunRecord, writeAlongside: () => void, spec?: string, events: readonly EventBody[] = []): Promise<void> {
    const id = runKey(record.name, record.dagRunId);
    const previous = this.issued.get(id);
    setNewest(this.issued, id, record, ISSUED_CACHE_SIZE);
    const staged = this.events.stage(events);
    const written = this.putRecord(record, previous, undefined);
    writeAlongside();
    if (spec !== undefined) alongside(this.specs.put(keys.spec(record.name, record.dagRunId), spec));
    return this.order.follow(this.committing(written, recordOf(record)), () => this.remember(id, record, staged));
  }

  saveSpec(name: string, dagRunId: string, spec: string): Promise<void> {
    return this.committing(this.specs.put(keys.spec(name, dagRunId), spec), `the definition of dag-run ${dagRunId} of DAG ${name}`).then(() => undefined);
  }

  getSpec(name: string, dagRunId: string): string | undefined {
    if (!couldExist(name, dagRunId)) return undefined;
    return this.specs.get(keys.spec(name, dagRunId));
  }

  /** The names that have stored runs, sub DAG runs' included: one seek per name. */
  runNames(): string[] {
    const names: string[] = [];
    for (;;) {
      const after = names.length > 0 ? keys.byNameAfter(names[names.length - 1]) : undefined;
      const next = firstOf(this.byName.getKeys({ ...(after ? { start: after } : {}), limit: 1 }));
      if (next === undefined) return names;
      names.push(String(next[0]));
    }
  }

  /**
   * Up to `limit` runs of `name` created before `beforeMs`, oldest first, from the index alone;
   * `after`: the last one of the previous page.
   */
  runsCreatedBefore(name: string, beforeMs: number, limit: number, after?: { createdAtMs: number; dagRunId: string }): Array<{ createdAtMs: number; dagRunId: string }> {
    if (!couldExist(name)) return [];
    const range = keys.byNameOlderThan(name, beforeMs);
    const page: Array<{ createdAtMs: number; dagRunId: string }> = [];
    for (const key of this.byName.getKeys(after ? { ...range, start: keys.byName(name, after.createdAtMs, after.dagRunId) } : range)) {
      const [, createdAtMs, dagRunId] = key as [string, number, string];
      if (after && createdAtMs === after.createdAtMs && dagRunId === after.dagRunId) continue;
      page.push({ createdAtMs, dagRunId });
      if (page.length >= limit) break;
    }
    return page;
  }

  /**
   * The newest run of `name`, a sub DAG run's included, as its summary row: one index read (latest()
   * skips sub runs, reading them all), and no nodes (a run of 10,000 steps decodes in tens of ms).
   */
  newestRun(name: string): RunSummaryRow | undefined {
    if (!couldExist(name)) return undefined;
    const key = firstOf(this.byName.getKeys({ ...keys.byNameNewestFirst(name), limit: 1 })) as Key | undefined;
    return key ? this.summary(name, String(key[2])) : undefined;
  }

  /** Whether another run of `name` has an id that begins with `prefix`. */
  hasRunIdStartingWith(name: string, prefix: string): boolean {
    return couldExist(name) && firstOf(this.runs.getKeys({ ...keys.runIdsStartingWith(name, prefix), limit: 1 })) !== undefined;
  }

  /** The run's newest record (written or being written) when it is finished; undefined otherwise. */
  finishedRun(name: string, dagRunId: string): RunRecord | undefined {
    const record = this.issued.get(runKey(name, dagRunId)) ?? this.get(name, dagRunId);
    return record && isFinalRunStatus(record.status) ? record : undefined;
  }

  /**
   * Removes a finished run's rows from every database, in one transaction. A run that is not
   * finished (a retry began since it was chosen) is left as it is: the answer is false.
   */
  removeRun(name: string, dagRunId: string): Promise<boolean> {
    const id = runKey(name, dagRunId);
    // Its status and creation time are all this needs: the summary row, not the nodes get() reads.
    const record = this.issued.get(id) ?? this.committed.get(id) ?? (couldExist(name, dagRunId) ? this.runs.get(keys.run(name, dagRunId)) : undefined);
    if (!record || !isFinalRunStatus(record.status)) return Promise.resolve(false);
    // A write issued after this one finds nothing to compare with, so it writes the run whole.
    this.issued.delete(id);
    for (const key of this.nodes.getKeys(keys.allNodesOf(name, dagRunId))) alongside(this.nodes.remove(key));
    alongside(this.stepViews.remove(keys.run(name, dagRunId)));
    alongside(this.specs.remove(keys.spec(name, dagRunId)));
    alongside(this.byTime.remove(keys.byTime(record.createdAtMs, name, dagRunId)));
    alongside(this.byName.remove(keys.byName(name, record.createdAtMs, dagRunId)));
    alongside(this.byStatus.remove(keys.byStatus(record.status, record.createdAtMs, name, dagRunId)));
    // Told after every earlier write of the run: none re-caches it.
    return this.order.follow(this.committing(this.runs.remove(keys.run(name, dagRunId)), `the removal of dag-run ${dagRunId} of DAG ${name}`), () => {
      if (!this.issued.has(id)) this.committed.delete(id);
      this.generation++;
    }).then(() => true);
  }

  isSuspended(fileName: string): boolean {
    return this.flags.get(keys.suspended(fileName)) === true;
  }

  /** `events`: what the change tells subscribers, committed with it. */
  async setSuspended(fileName: string, suspended: boolean, events: readonly EventBody[] = []): Promise<void> {
    const what = `whether DAG ${fileName} is suspended`;
    const staged = this.events.stage(events);
    await this.order.follow(this.committing(suspended ? this.flags.put(keys.suspended(fileName), true) : this.flags.remove(keys.suspended(fileName)), what), () => this.events.committed(staged));
  }

  /** Whether the store takes a write and reads it back (store-probe.ts). */
  check(): Promise<void> {
    return this.probe.check();
  }

  async close(): Promise<void> {
    await this.probe.stop();
    await this.root.flushed;
    await this.root.close();
  }
}

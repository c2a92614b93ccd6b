// The writes of active runs: one write per run per tick, in order, and when a run counts as
// finished (its final record durable and its log closed). A write that fails (a full disk) is not
// the end of the run's record: its newest record is written again until it is stored.
import { isFinalRunStatus, markStage, runKey, type EventBody, type LogStore, type RunRecord, type RunStore } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';

/** How long a run whose record could not be stored waits before it is written again. */
const RETRY_MS = 1000;

export class RunWrites {
  /** Records waiting for this tick's write, with the nodes they changed: one macrostep's transitions become one write. */
  private readonly unwritten = new Map<string, { record: RunRecord; changed: Set<number>; events: EventBody[] }>();
  /**
   * Events whose write failed, per run: the run's next write carries them, ahead of its own (each
   * transition keeps its event; numbers follow commits).
   */
  private readonly lostEvents = new Map<string, EventBody[]>();
  /** The newest write of each active run; a run counts as finished once its final write is durable. */
  private readonly lastWrite = new Map<string, Promise<void>>();
  private readonly finishing = new Map<string, Promise<void>>();
  private readonly waiters = new Map<string, Array<() => void>>();
  /** Each run's newest record handed to the store, while the run is active or its record unstored. */
  private readonly newest = new Map<string, RunRecord>();
  /** Runs whose newest record is not stored, with the number of the failure that left it so. */
  private readonly unsaved = new Map<string, number>();
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runs: RunStore,
    private readonly logs: LogStore,
    private readonly onStoreError: (error: unknown) => void,
  ) {}

  /** A run actor's transition and its events: written with the others of this tick. */
  persist(record: RunRecord, changed: Iterable<number>, events: readonly EventBody[]): void {
    const key = runKey(record.name, record.dagRunId);
    const waiting = this.unwritten.get(key);
    if (waiting) {
      waiting.record = record;
      for (const index of changed) waiting.changed.add(index);
      for (const event of events) waiting.events.push(event);
      return;
    }
    this.unwritten.set(key, { record, changed: new Set(changed), events: [...events] });
    // Issued in the same tick as the transitions it carries, ahead of anything they dispatch
    // coming back; LMDB applies writes in call order.
    queueMicrotask(() => {
      const latest = this.unwritten.get(key)!;
      this.unwritten.delete(key);
      this.lastWrite.set(key, this.write(key, latest.record, latest.changed, latest.events));
    });
  }

  /**
   * Settles when the record is stored or could not be. The store makes every write issued after
   * a failure whole (LmdbRunStore.committing), so one issued after it that commits is the run's
   * whole newest record: the run is stored again.
   */
  private write(key: string, record: RunRecord, changed?: Iterable<number>, own: EventBody[] = []): Promise<void> {
    this.newest.set(key, record);
    const issuedAfter = this.failures;
    const lost = this.lostEvents.get(key);
    if (lost) this.lostEvents.delete(key);
    const events = lost ? [...lost, ...own] : own;
    if (isFinalRunStatus(record.status)) markStage('record.final.issued');
    return this.runs.save(record, changed, events).then(() => {
      if (isFinalRunStatus(record.status)) markStage('record.final.durable');
      const failure = this.unsaved.get(key);
      if (failure !== undefined && failure <= issuedAfter) {
        this.unsaved.delete(key);
        log.info({ dag: record.name, dagRunId: record.dagRunId }, 'the record of the run is stored again');
      }
      if (isFinalRunStatus(record.status) && this.newest.get(key) === record && !this.unsaved.has(key)) this.newest.delete(key);
    }, (error: unknown) => {
      if (events.length > 0) this.lostEvents.set(key, [...(this.lostEvents.get(key) ?? []), ...events]);
      if (!this.unsaved.has(key)) {
        this.onStoreError(error);
        log.warn({ dag: record.name, dagRunId: record.dagRunId, error: errorText(error) }, `the record of the run is written again every ${RETRY_MS / 1000} s until it is stored`);
      }
      this.unsaved.set(key, ++this.failures);
      this.retryTimer ??= setTimeout(() => this.retry(), RETRY_MS).unref();
    });
  }

  /** Writes the newest record of each run that is not stored, once more. */
  private retry(): void {
    this.retryTimer = undefined;
    for (const key of this.unsaved.keys()) {
      const record = this.newest.get(key);
      // A run still writing has its next write queued: that one is the retry.
      if (!record || this.unwritten.has(key)) continue;
      void this.write(key, record);
    }
  }

  /** Resolves once the writes issued for the run so far have settled (stored, or failed and kept to write again). */
  settled(name: string, dagRunId: string): Promise<void> {
    const key = runKey(name, dagRunId);
    // After the microtask that issues this tick's write.
    return Promise.resolve().then(() => this.lastWrite.get(key) ?? this.finishing.get(key));
  }

  /** The runs whose newest record is not stored (a full disk), as `name dagRunId`. */
  get unsavedRuns(): string[] {
    return [...this.unsaved.keys()].map((key) => key.replace('\u0000', ' '));
  }

  /** Stops writing records again: the next start's recovery settles a run left recorded running. */
  close(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.unsaved.size > 0) log.error({ runs: this.unsavedRuns }, 'closing with runs whose newest record could not be stored: each stays as it was last stored, and the next start settles one left running as interrupted');
  }

  /** The run reached its final state: it is finished once its final write is durable and its log closed. */
  finished(name: string, dagRunId: string, log: string): void {
    const key = runKey(name, dagRunId);
    // The final record's write is issued by a microtask queued before this one.
    const durable = Promise.resolve()
      .then(() => {
        const write = this.lastWrite.get(key);
        this.lastWrite.delete(key);
        return write;
      })
      .then(() => this.logs.closeRunLog(log));
    this.finishing.set(key, durable);
    void durable.then(() => {
      this.finishing.delete(key);
      for (const resolve of this.waiters.get(key) ?? []) resolve();
      this.waiters.delete(key);
    });
  }

  /** Resolves when the run's final state is recorded; at once when `isActive` says it is not active. */
  whenFinished(name: string, dagRunId: string, isActive: boolean): Promise<void> {
    const key = runKey(name, dagRunId);
    const finishing = this.finishing.get(key);
    if (finishing) return finishing;
    if (!isActive) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.set(key, [...(this.waiters.get(key) ?? []), resolve]);
    });
  }
}


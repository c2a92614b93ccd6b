// The writes of active runs: one write per run per tick, in order, and when a run counts as
// finished (its final record durable and its log closed).
import type { LogStore, RunRecord, RunStore } from '../core/index.ts';

export class RunWrites {
  /** Records waiting for this tick's write, with the nodes they changed: one macrostep's transitions become one write. */
  private readonly unwritten = new Map<string, { record: RunRecord; changed: Set<number> }>();
  /** The newest write of each active run; a run counts as finished once its final write is durable. */
  private readonly lastWrite = new Map<string, Promise<void>>();
  private readonly finishing = new Map<string, Promise<void>>();
  private readonly waiters = new Map<string, Array<() => void>>();

  constructor(
    private readonly runs: RunStore,
    private readonly logs: LogStore,
    private readonly onStoreError: (error: unknown) => void,
  ) {}

  /** A run actor's transition: written with the others of this tick. */
  persist(record: RunRecord, changed: Iterable<number>): void {
    const key = runKey(record.name, record.dagRunId);
    const waiting = this.unwritten.get(key);
    if (waiting) {
      waiting.record = record;
      for (const index of changed) waiting.changed.add(index);
      return;
    }
    this.unwritten.set(key, { record, changed: new Set(changed) });
    // Issued in the same tick as the transitions it carries, ahead of anything they dispatch
    // coming back; LMDB applies writes in call order.
    queueMicrotask(() => {
      const latest = this.unwritten.get(key)!;
      this.unwritten.delete(key);
      this.lastWrite.set(key, this.runs.save(latest.record, latest.changed).catch(this.onStoreError));
    });
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

export function runKey(name: string, dagRunId: string): string {
  return `${name}\u0000${dagRunId}`;
}

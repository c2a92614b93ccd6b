// The event log on LMDB, in the run store's environment: each event is put, under its number, by
// the write that stores the record it describes (LmdbRunStore.putRecord), so it commits with that
// record or not at all. Subscribers hear an event once its commit is durable, in number order.
import type { Database, RootDatabase } from 'lmdb';
import type { EngineEvent, EngineListener, EventBody, EventLog } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import { keys } from './keys.ts';
import { alongside } from './storage-full.ts';

/** How many events one removal by retention takes at most: the writer thread is never held long. */
const PRUNE_BATCH = 5_000;

export class LmdbEventLog implements EventLog {
  private readonly events: Database<EngineEvent, number>;
  private readonly listeners = new Set<EngineListener>();
  /** The last number given; a write that failed leaves a gap, never a number used twice. */
  private lastGiven: number;
  private committedHead: number;
  private pruned: number;
  private lastPut: Promise<boolean> = Promise.resolve(true);

  constructor(root: RootDatabase, private readonly flags: Database<unknown, Array<string | number>>) {
    this.events = root.openDB({ name: 'events' });
    this.pruned = Number(flags.get(keys.eventsPrunedThrough()) ?? 0);
    let last = 0;
    for (const key of this.events.getKeys({ reverse: true, limit: 1 })) last = key;
    // Every event may have been removed by retention: numbering goes on after the last one given.
    this.lastGiven = this.committedHead = Math.max(last, this.pruned);
  }

  get head(): number {
    return this.committedHead;
  }

  get prunedThrough(): number {
    return this.pruned;
  }

  /** The number of events kept. */
  get size(): number {
    return (this.events.getStats() as { entryCount: number }).entryCount;
  }

  /**
   * Numbers `bodies` and puts them in the write being issued: inside a synchronous transaction, or
   * as plain writes of this tick (which commit together, in call order, with the record's).
   */
  stage(bodies: readonly EventBody[]): EngineEvent[] {
    const staged: EngineEvent[] = [];
    for (const body of bodies) {
      const event = { ...body, seq: ++this.lastGiven } as EngineEvent;
      alongside(this.lastPut = this.events.put(event.seq, event));
      staged.push(event);
    }
    return staged;
  }

  /** The last put issued: it commits with every put issued before it. */
  get lastWrite(): Promise<boolean> {
    return this.lastPut;
  }

  /** The write that held `events` is durable: readers may see them, subscribers hear them. */
  committed(events: readonly EngineEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.committedHead) continue;
      this.committedHead = event.seq;
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (error) {
          // A listener's failure is its own; the log goes on.
          log.debug({ error: errorText(error) }, 'an event listener failed');
        }
      }
    }
  }

  read(after: number, limit: number): EngineEvent[] {
    const found: EngineEvent[] = [];
    if (after >= this.committedHead) return found;
    for (const { key, value } of this.events.getRange({ start: after + 1, end: this.committedHead + 1, limit })) {
      if (key > this.committedHead) break;
      found.push(value);
    }
    return found;
  }

  subscribe(listener: EngineListener): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  /**
   * Issues the removal of the oldest events older than `beforeMs`, or past the newest `maxCount`
   * (0: no count limit), up to a batch; gives back how many, with the write to wait for (none
   * when nothing is old).
   */
  pruneBatch(beforeMs: number, maxCount: number): { removed: number; written?: Promise<unknown> } {
    const overCount = maxCount > 0 ? Math.max(0, this.size - maxCount) : 0;
    let removed = 0;
    let through = this.pruned;
    for (const { key, value } of this.events.getRange({ limit: PRUNE_BATCH })) {
      if (removed >= overCount && Date.parse(value.at) >= beforeMs) break;
      if (key > this.committedHead) break;
      alongside(this.events.remove(key));
      through = key;
      removed++;
    }
    if (removed === 0) return { removed };
    this.pruned = through;
    return { removed, written: this.flags.put(keys.eventsPrunedThrough(), through) };
  }
}

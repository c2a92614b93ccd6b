// What a worker's runs produce (records, events, log lines), carried to the server on one Redis
// Stream. A worker appends each item with its attempt and a sequence number that grows by one per
// attempt, several items to an entry when they come faster than Redis answers; the server reads
// the stream through a consumer group, hands each batch to be applied (one commit of its own
// store), and only then acknowledges and deletes the entries. So an item is applied once: one the
// server read but had not acknowledged when it stopped is read again at its next start, and
// skipped if its sequence number was applied already; one from an attempt that is no longer the
// run's current one (settled, or superseded by a retry elsewhere) is dropped.
import type { Redis } from 'ioredis';

export const RECORD_STREAM = 'troupe:records';
const GROUP = 'troupe-server';

/** One item of a run's attempt, as it crosses the stream. */
export interface StreamItem {
  /** The attempt it belongs to (its run's name, id and attempt id, as the sender names it). */
  attempt: string;
  /** 1 for the attempt's first item, then one more for each. */
  seq: number;
  kind: string;
  /** JSON text. */
  payload: string;
}

/** The most items, and about the most payload bytes, one entry carries. */
const ENTRY_ITEMS = 200;
const ENTRY_BYTES = 1024 * 1024;

interface Outgoing {
  item: StreamItem;
  sent(item: StreamItem): void;
  failed(error: unknown): void;
}

/**
 * The sending side: items of each attempt numbered in the order they are appended. One append is
 * on its way to Redis at a time; what is appended meanwhile goes together in the next entry (an
 * entry holds items one after the other, four fields each). A lone item goes at once; under load
 * a round trip carries many.
 */
export class RecordOutbox {
  private readonly next = new Map<string, number>();
  private readonly waiting: Outgoing[] = [];
  private sending = false;
  private readonly idleWaiters: Array<() => void> = [];

  /**
   * `redis` should wait for a connection rather than fail a command (`maxRetriesPerRequest: null`):
   * while Redis is away, items wait here, in order, and go when it is back.
   */
  constructor(private readonly redis: Redis, private readonly stream = RECORD_STREAM) {}

  /** Appends an item; resolves once Redis holds it. */
  append(attempt: string, kind: string, payload: unknown): Promise<StreamItem> {
    const seq = (this.next.get(attempt) ?? 0) + 1;
    this.next.set(attempt, seq);
    const item = { attempt, seq, kind, payload: JSON.stringify(payload) };
    return new Promise((sent, failed) => {
      this.waiting.push({ item, sent, failed });
      this.send();
    });
  }

  /** The attempt has ended: its numbering is no longer needed. */
  forget(attempt: string): void {
    this.next.delete(attempt);
  }

  /** Resolves once every item appended so far has been answered (held by Redis, or failed). */
  idle(): Promise<void> {
    if (!this.sending && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private send(): void {
    if (this.sending) return;
    if (this.waiting.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    let count = 0;
    let bytes = 0;
    while (count < this.waiting.length && count < ENTRY_ITEMS && (count === 0 || bytes + this.waiting[count].item.payload.length <= ENTRY_BYTES)) {
      bytes += this.waiting[count].item.payload.length;
      count++;
    }
    const entry = this.waiting.splice(0, count);
    const fields = entry.flatMap(({ item }) => ['a', item.attempt, 's', String(item.seq), 'k', item.kind, 'p', item.payload]);
    this.sending = true;
    this.redis.xadd(this.stream, '*', ...fields).then(
      () => { for (const each of entry) each.sent(each.item); },
      (error: unknown) => { for (const each of entry) each.failed(error); },
    ).finally(() => {
      this.sending = false;
      this.send();
    });
  }
}

export interface InboxOptions {
  /** Applies a batch, in stream order, durably; an item it fails on is read again later. */
  apply(items: StreamItem[]): Promise<void>;
  /** The last sequence number applied of the attempt (0 when none): items at or below it are skipped. */
  appliedSeq(attempt: string): number;
  /** Whether the attempt is its run's current one: items of others are dropped. */
  isCurrent(attempt: string): boolean;
  /** How many items a read takes at most. Default 500. */
  batch?: number;
  /** How long a read waits for new items, ms. Default 1,000. */
  blockMs?: number;
  /** Told of a failed read or apply (masked by the caller); the inbox waits a moment and goes on. */
  onError?(error: Error): void;
  stream?: string;
  /**
   * A hash where each attempt's newest applied number is kept, written with the acknowledgement:
   * a server started again reads it (appliedFrom) and applies nothing twice.
   */
  appliedKey?: string;
}

/** Each attempt's newest applied number, as the inbox kept it in `appliedKey`. */
export async function appliedFrom(redis: Redis, appliedKey: string): Promise<Map<string, number>> {
  const flat = await redis.hgetall(appliedKey);
  return new Map(Object.entries(flat).map(([attempt, seq]) => [attempt, Number(seq)]));
}

/**
 * The receiving side: reads through the consumer group until closed. `redis` is its own connection
 * (reads block on it), made with `enableOfflineQueue: false`: while Redis is away a read fails at
 * once and is tried again after a pause, rather than wait in a queue that closing could not empty.
 */
export class RecordInbox {
  private closed = false;
  private running: Promise<void> | undefined;
  /** Whether the consumer group is known to exist (a Redis that lost its data has none). */
  private groupMade = false;
  private readonly stream: string;

  constructor(private readonly redis: Redis, private readonly options: InboxOptions) {
    this.stream = options.stream ?? RECORD_STREAM;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.redis.disconnect();
    // A read queued on a connection that is reconnecting is never answered: waited for a moment only.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running?.catch(() => undefined), new Promise((resolve) => { timer = setTimeout(resolve, 1_000); })]);
    clearTimeout(timer);
  }

  private async loop(): Promise<void> {
    // Entries read before a stop and not acknowledged come first ('0'), then new ones ('>').
    let pendingFirst = true;
    while (!this.closed) {
      // Away (or not yet connected): wait for it rather than fail a read every pause.
      if (this.redis.status !== 'ready') {
        await readyOrPause(this.redis, 500);
        continue;
      }
      try {
        await this.ensureGroup();
        const wait = pendingFirst ? [] : ['BLOCK', this.options.blockMs ?? 1_000];
        const read = await this.redis.call('XREADGROUP', 'GROUP', GROUP, 'server', 'COUNT', this.options.batch ?? 500, ...wait,
          'STREAMS', this.stream, pendingFirst ? '0' : '>') as Array<[string, Array<[string, string[]]>]> | null;
        const entries = read?.[0]?.[1] ?? [];
        if (pendingFirst && entries.length === 0) {
          pendingFirst = false;
          continue;
        }
        if (entries.length > 0) await this.take(entries);
      } catch (error) {
        if (this.closed) return;
        // A Redis started anew without its data has no group: made again at the next read.
        if (/NOGROUP/.test((error as Error).message)) this.groupMade = false;
        this.options.onError?.(error as Error);
        // Read the pending entries again: an apply that failed left its batch unacknowledged.
        pendingFirst = true;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  private async ensureGroup(): Promise<void> {
    if (this.groupMade) return;
    try {
      await this.redis.xgroup('CREATE', this.stream, GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) throw error;
    }
    this.groupMade = true;
  }

  /** The well-formed items of an entry; a malformed one is told and dropped. */
  private wellFormedItems(fields: string[]): StreamItem[] {
    const items = entryItems(fields);
    const wellFormed = items.filter((item): item is StreamItem => item !== undefined);
    if (wellFormed.length < items.length) this.options.onError?.(new Error(`dropped a malformed entry of ${this.stream}`));
    return wellFormed;
  }

  private async take(entries: Array<[string, string[]]>): Promise<void> {
    const fresh: StreamItem[] = [];
    const highest = new Map<string, number>();
    for (const item of entries.flatMap(([, fields]) => this.wellFormedItems(fields))) {
      if (!this.options.isCurrent(item.attempt)) continue;
      const applied = Math.max(this.options.appliedSeq(item.attempt), highest.get(item.attempt) ?? 0);
      if (item.seq <= applied) continue;
      highest.set(item.attempt, item.seq);
      fresh.push(item);
    }
    if (fresh.length > 0) await this.options.apply(fresh);
    const ids = entries.map(([id]) => id);
    const done = this.redis.multi().xack(this.stream, GROUP, ...ids).xdel(this.stream, ...ids);
    // Attempts that ended with this batch are not kept.
    const kept = [...highest].filter(([attempt]) => this.options.isCurrent(attempt));
    if (this.options.appliedKey && kept.length > 0) done.hset(this.options.appliedKey, ...kept.flatMap(([attempt, seq]) => [attempt, String(seq)]));
    await done.exec();
  }
}

function readyOrPause(redis: Redis, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/** The items of an entry, four fields each, in order; undefined in place of a malformed one. */
function entryItems(fields: string[]): Array<StreamItem | undefined> {
  const items: Array<StreamItem | undefined> = [];
  for (let index = 0; index < fields.length; index += 8) {
    const [a, attempt, s, seqText, k, kind, p, payload] = fields.slice(index, index + 8);
    const seq = Number(seqText);
    const wellFormed = a === 'a' && s === 's' && k === 'k' && p === 'p' && attempt !== undefined && kind !== undefined && payload !== undefined;
    items.push(wellFormed && Number.isSafeInteger(seq) && seq >= 1 ? { attempt, seq, kind, payload } : undefined);
  }
  return items;
}

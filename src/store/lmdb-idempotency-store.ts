// IdempotencyStore on LMDB, in the run store's environment: the answers of idempotent submits by
// caller scope and key, and an index by time for the sweep that removes those past the window.
// Writes go through LMDB's writer thread; nothing here runs a synchronous commit.
import type { Database, RootDatabase } from 'lmdb';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_WINDOW_MS, type Clock, type IdempotencyStore, type StoredAnswer } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import { keys } from './keys.ts';
import { alongside, lmdbWrite } from './storage-full.ts';

type Key = Array<string | number>;

const SWEEP_EVERY_MS = 10 * 60 * 1000;
/** Removals issued per commit: a sweep of many old answers never holds the writer for long. */
const SWEEP_BATCH = 500;
/** A scope is built by the HTTP layer from an id or a configured name; LMDB refuses keys past 1978 bytes. */
const MAX_SCOPE_BYTES = 1024;

const WHAT = 'the answer of an idempotent request';

export class LmdbIdempotencyStore implements IdempotencyStore {
  private readonly answers: Database<StoredAnswer, Key>;
  private readonly byTime: Database<true, Key>;
  /** Answers whose write has not committed yet: LMDB's reads see committed data only. */
  private readonly pending = new Map<string, StoredAnswer>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(env: RootDatabase, private readonly path: string, private readonly clock: Clock) {
    this.answers = env.openDB({ name: 'idempotent-answers' });
    this.byTime = env.openDB({ name: 'idempotent-answers-by-time' });
  }

  get(scope: string, key: string, sinceMs: number): StoredAnswer | undefined {
    if (!fits(scope, key)) return undefined;
    const answer = this.pending.get(pendingId(scope, key)) ?? this.answers.get(keys.idempotentAnswer(scope, key));
    return answer !== undefined && answer.storedAtMs >= sinceMs ? answer : undefined;
  }

  put(scope: string, key: string, answer: StoredAnswer): Promise<void> {
    if (!fits(scope, key)) return Promise.reject(new Error('idempotency scope or key too long to store'));
    const id = pendingId(scope, key);
    this.pending.set(id, answer);
    // Plain writes of one tick: LMDB commits them in one transaction.
    alongside(this.byTime.put(keys.idempotentByTime(answer.storedAtMs, scope, key), true));
    const written = lmdbWrite(this.answers.put(keys.idempotentAnswer(scope, key), answer), WHAT, this.path);
    return written.then(() => undefined).finally(() => {
      if (this.pending.get(id) === answer) this.pending.delete(id);
    });
  }

  /** Sweeps now, then every ten minutes, off the request path. */
  start(): void {
    if (this.timer) return;
    const sweep = () => void this.sweep().catch((error: unknown) => log.warn({ error: errorText(error) }, 'old idempotent answers could not be removed; the next sweep tries again'));
    this.timer = setInterval(sweep, SWEEP_EVERY_MS).unref();
    sweep();
  }

  /** Removes the answers past the window, a batch per commit; how many went. One sweep at a time. */
  sweep(): Promise<number> {
    return (this.sweeping ??= this.sweepBatches().finally(() => {
      this.sweeping = undefined;
    }));
  }

  private async sweepBatches(): Promise<number> {
    const cutoff = this.clock.now() - IDEMPOTENCY_WINDOW_MS;
    let removed = 0;
    for (;;) {
      const batch = [...this.byTime.getKeys({ ...keys.idempotentStoredBefore(cutoff), limit: SWEEP_BATCH })] as Array<[number, string, string]>;
      if (batch.length === 0) return removed;
      const writes: Array<Promise<unknown>> = [];
      for (const timeKey of batch) {
        writes.push(this.byTime.remove(timeKey));
        const [storedAtMs, scope, key] = timeKey;
        // A key used again after its window holds a newer answer (pending, or committed with
        // another time): only its old time entry goes.
        if (this.pending.has(pendingId(scope, key))) continue;
        if (this.answers.get(keys.idempotentAnswer(scope, key))?.storedAtMs !== storedAtMs) continue;
        writes.push(this.answers.remove(keys.idempotentAnswer(scope, key)));
        removed++;
      }
      // Removals of one tick commit together; the next batch is read once they have (reads see
      // committed data only).
      const last = writes.pop()!;
      for (const write of writes) alongside(write);
      await lmdbWrite(last, 'the removal of old idempotent answers', this.path);
      if (batch.length < SWEEP_BATCH) return removed;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
  }
}

const pendingId = (scope: string, key: string) => `${scope}\u0000${key}`;

const fits = (scope: string, key: string) => Buffer.byteLength(scope) <= MAX_SCOPE_BYTES && Buffer.byteLength(key) <= IDEMPOTENCY_KEY_MAX_LENGTH;

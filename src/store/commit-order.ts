// What a committed write tells (the run's newest record, its events) is told in the order the
// writes were issued, not in the order lmdb-js settles their promises. LMDB commits one
// transaction after another, so a write that committed follows every write issued before it; but
// under load lmdb-js was seen settling a write's promise after some 200 later ones had settled.
// Told as they settled, the store's cache of committed records kept a running record over the
// run's final one (its listing said `running` for good), and the event log, which tells
// subscribers each number once and in order, dropped the late write's events.

interface Issued {
  tell: () => void;
  /** Told, or failed: nothing more to do when the queue reaches it. */
  done: boolean;
}

/** Slots the queue may leave behind its head before they are cut off. */
const COMPACT_AFTER = 1024;

export class CommitOrder {
  private readonly queue: Issued[] = [];
  private head = 0;

  /**
   * `tell` runs once `write` has committed, after the `tell` of every write issued before it
   * (which committed before it): when it settles, or sooner, when a later write's settles.
   * A write that fails tells nothing.
   */
  follow<T>(write: Promise<T>, tell: () => void): Promise<void> {
    const issued: Issued = { tell, done: false };
    this.queue.push(issued);
    return write.then(() => this.tellThrough(issued), (error: unknown) => {
      issued.done = true;
      throw error;
    });
  }

  /** Tells every write still waiting: none is, when no write is in flight. */
  flush(): void {
    this.tellThrough(undefined);
  }

  private tellThrough(last: Issued | undefined): void {
    if (last?.done) return;
    while (this.head < this.queue.length) {
      const next = this.queue[this.head++];
      if (!next.done) {
        next.done = true;
        next.tell();
      }
      if (next === last) break;
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > COMPACT_AFTER) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

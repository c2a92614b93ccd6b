// A clock and timers that move only when told: tests (ours and embedders') move time instead of
// waiting for it. A timer due on the way fires at its own instant, in order.

export class ManualClock {
  private current: number;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;

  constructor(start: number | string) {
    this.current = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.pending.set(id, { at: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(id: unknown): void {
    this.pending.delete(id as number);
  }

  /** The instants the pending timers are due at, soonest first. */
  get armed(): number[] {
    return [...this.pending.values()].map((timer) => timer.at).sort((a, b) => a - b);
  }

  /** Moves to `target`, firing each timer due on the way (those its callbacks arm included) at its instant. */
  advanceTo(target: number | string): void {
    const end = typeof target === 'string' ? Date.parse(target) : target;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.pending) if (entry[1].at <= end && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.pending.delete(due[0]);
      this.current = Math.max(this.current, due[1].at);
      due[1].fn();
    }
    this.current = Math.max(this.current, end);
  }

  /** Moves to `target` without firing the timers due on the way, as a busy event loop delays them; the next advance fires them. */
  jumpTo(target: number | string): void {
    this.current = Math.max(this.current, typeof target === 'string' ? Date.parse(target) : target);
  }

  advanceBy(ms: number): void {
    this.advanceTo(this.current + ms);
  }
}

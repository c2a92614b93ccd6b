// Hands the planner's due ticks to a callback when they fall: one timer, armed for the soonest
// tick. It acts on nothing itself; what a tick does (enqueue, stop, restart) is the callback's.
import type { Clock, Timers } from '../../core/index.ts';
import type { CronPlanner, DueTick } from './cron-planner.ts';

export interface CronTickerOptions {
  planner: CronPlanner;
  clock: Clock;
  timers: Timers;
  /** The ticks due since the previous call, oldest first; `truncated` names DAGs with more than were handed. */
  onTicks: (ticks: DueTick[], truncated: string[]) => void;
}

// Node's timers overflow past 2^31-1 ms (about 24.8 days) and fire at once: a far tick is
// reached by waking up on the way.
const MAX_DELAY_MS = 2 ** 31 - 1;

export class CronTicker {
  private timer: unknown;
  private running = false;
  /** Ticks up to this instant were handed out. */
  private handedUpTo = 0;

  constructor(private readonly options: CronTickerOptions) {}

  /**
   * Hands out the ticks in (since, now], then those that fall later. `since` is when ticks were
   * last handed (a previous run of the server), so that the ticks missed while down are seen.
   */
  start(since = this.options.clock.now()): void {
    this.running = true;
    this.handedUpTo = since;
    this.fire();
  }

  /** The planner changed (a DAG added, edited, renamed, removed, suspended or resumed): re-arm. */
  refresh(): void {
    if (this.running) this.fire();
  }

  stop(): void {
    this.running = false;
    this.clear();
  }

  /** When ticks were last handed out: what a restarted server passes to `start`. */
  get lastHandedAt(): number {
    return this.handedUpTo;
  }

  private fire(): void {
    this.clear();
    const now = this.options.clock.now();
    if (now > this.handedUpTo) {
      const { ticks, truncated } = this.options.planner.due(this.handedUpTo, now);
      this.handedUpTo = now;
      if (ticks.length > 0) this.options.onTicks(ticks, truncated);
    }
    // The callback may have stopped the ticker.
    if (this.running) this.arm();
  }

  private arm(): void {
    const next = this.options.planner.soonest();
    if (!next) return;
    const delay = Math.min(Math.max(next.at - this.options.clock.now(), 0), MAX_DELAY_MS);
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, delay);
  }

  private clear(): void {
    if (this.timer !== undefined) this.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

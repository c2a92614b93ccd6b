// The schedules of the stored DAGs, by file name, and what is due next. It decides times only:
// starting, stopping or restarting runs is for whoever acts on its answers.
import type { Clock, Schedule } from '../../core/index.ts';
import { compileSchedule, isScheduled, nextTick, nextTicks, previousTick, ticksBetween, type CompiledSchedule, type Tick, type TickKind } from './ticks.ts';

export interface CronPlannerOptions {
  clock: Clock;
  /** Whether a DAG (by file name) is suspended: a suspended DAG has no next run and no due ticks. */
  isSuspended: (fileName: string) => boolean;
  /** The zone of expressions without `CRON_TZ=`; absent: the server's. */
  timeZone?: string;
}

export interface DueTick extends Tick {
  fileName: string;
}

interface Entry {
  compiled: CompiledSchedule;
  /** Ticks at or before it are never due: the DAG was not planned (or was suspended) then. */
  since: number;
  /** The soonest tick after `from`, valid for every instant in [from, next.at). */
  cached?: { from: number; next: Tick | undefined };
  /** The same for start ticks alone: listing many DAGs by next run asks croner only when a tick has passed. */
  cachedStart?: { from: number; next: number | undefined };
}

export class CronPlanner {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: CronPlannerOptions) {}

  /**
   * A DAG added or edited: its schedule replaces any it had, and its ticks after `since` (now by
   * default; at start, when the server last planned, so that ticks missed while down are due)
   * are due. An unscheduled DAG is dropped.
   */
  set(fileName: string, schedule: Schedule, since = this.options.clock.now()): void {
    const compiled = compileSchedule(schedule, this.options.timeZone);
    if (isScheduled(compiled)) this.entries.set(fileName, { compiled, since });
    else this.entries.delete(fileName);
  }

  /** A DAG resumed: the ticks that fell while it was suspended (up to `until`) are not due. */
  skipUntil(fileName: string, until = this.options.clock.now()): void {
    const entry = this.entries.get(fileName);
    if (entry) entry.since = Math.max(entry.since, until);
  }

  remove(fileName: string): void {
    this.entries.delete(fileName);
  }

  rename(fileName: string, newFileName: string): void {
    const entry = this.entries.get(fileName);
    this.entries.delete(fileName);
    if (entry) this.entries.set(newFileName, entry);
  }

  fileNames(): string[] {
    return [...this.entries.keys()];
  }

  /** When the DAG's next scheduled run starts (its first start tick after `now`); undefined when none or suspended. */
  nextRun(fileName: string, now = this.options.clock.now()): number | undefined {
    const entry = this.entries.get(fileName);
    if (!entry || this.options.isSuspended(fileName)) return undefined;
    const { cachedStart } = entry;
    if (cachedStart && now >= cachedStart.from && (cachedStart.next === undefined || now < cachedStart.next)) return cachedStart.next;
    entry.cachedStart = { from: now, next: nextTick(entry.compiled, 'start', now)?.at };
    return entry.cachedStart.next;
  }

  /** The DAG's last tick of `kind` before `beforeMs`, whether or not it was planned then. */
  previousTick(fileName: string, kind: TickKind, beforeMs: number): number | undefined {
    const entry = this.entries.get(fileName);
    return entry ? previousTick(entry.compiled, kind, beforeMs) : undefined;
  }

  /** The soonest tick of any kind after now, over every DAG not suspended; ties go to the first file name. */
  soonest(): DueTick | undefined {
    const now = this.options.clock.now();
    let soonest: DueTick | undefined;
    for (const [fileName, entry] of this.entries) {
      if (this.options.isSuspended(fileName)) continue;
      const next = this.soonestOf(entry, now);
      if (next && (!soonest || next.at < soonest.at || (next.at === soonest.at && fileName < soonest.fileName))) soonest = { ...next, fileName };
    }
    return soonest;
  }

  /** Ticks in (fromMs, toMs] of every DAG not suspended, after its `since`, oldest first, at most `limit` per DAG. */
  due(fromMs: number, toMs: number, limit = 1000): { ticks: DueTick[]; truncated: string[] } {
    const ticks: DueTick[] = [];
    const truncated: string[] = [];
    for (const [fileName, entry] of this.entries) {
      if (this.options.isSuspended(fileName)) continue;
      const found = ticksBetween(entry.compiled, Math.max(fromMs, entry.since), toMs, limit);
      for (const tick of found.ticks) ticks.push({ ...tick, fileName });
      if (found.truncated) truncated.push(fileName);
    }
    ticks.sort((a, b) => a.at - b.at || (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
    return { ticks, truncated };
  }

  private soonestOf(entry: Entry, now: number): Tick | undefined {
    const { cached } = entry;
    if (cached && now >= cached.from && (cached.next === undefined || now < cached.next.at)) return cached.next;
    const next = nextTicks(entry.compiled, now).soonest;
    entry.cached = { from: now, next };
    return next;
  }
}

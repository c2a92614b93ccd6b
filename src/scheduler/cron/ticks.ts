// When a DAG's schedule ticks: pure functions over its compiled expressions and instants in
// milliseconds. Nothing here reads the clock or starts anything; the planner and scheduler do.
import type { Schedule, ScheduleEntry } from '../../core/index.ts';
import { compileCron } from '../../definition/index.ts';

const TICK_KINDS = ['start', 'stop', 'restart'] as const;
export type TickKind = (typeof TICK_KINDS)[number];

export interface Tick {
  kind: TickKind;
  /** The instant, in milliseconds since the epoch (whole seconds). */
  at: number;
  /** The expression that ticks, as written (with its `CRON_TZ=` prefix). */
  expression: string;
}

interface CompiledEntry {
  entry: ScheduleEntry;
  cron: ReturnType<typeof compileCron>;
}

export type CompiledSchedule = Record<TickKind, CompiledEntry[]>;

/**
 * Each expression read once, in its `CRON_TZ` zone or else `defaultZone` (absent: the server's
 * zone). The schedule was validated by the parser; an entry croner still refuses is left out
 * rather than failing every other DAG's planning.
 */
export function compileSchedule(schedule: Schedule, defaultZone?: string): CompiledSchedule {
  const compile = (entries: ScheduleEntry[]) => entries.flatMap((entry) => {
    try {
      return [{ entry, cron: compileCron(entry, defaultZone) }];
    } catch {
      return [];
    }
  });
  return { start: compile(schedule.start), stop: compile(schedule.stop), restart: compile(schedule.restart) };
}

export function isScheduled(compiled: CompiledSchedule): boolean {
  return TICK_KINDS.some((kind) => compiled[kind].length > 0);
}

/** The first tick of `kind` strictly after `afterMs`; two expressions due at once make one tick. */
export function nextTick(compiled: CompiledSchedule, kind: TickKind, afterMs: number): Tick | undefined {
  let soonest: Tick | undefined;
  for (const { entry, cron } of compiled[kind]) {
    const at = cron.nextRun(new Date(afterMs))?.getTime();
    if (at !== undefined && (soonest === undefined || at < soonest.at)) soonest = { kind, at, expression: entry.expression };
  }
  return soonest;
}

/** The last tick of `kind` strictly before `beforeMs`; undefined when there is none. */
export function previousTick(compiled: CompiledSchedule, kind: TickKind, beforeMs: number): number | undefined {
  let latest: number | undefined;
  for (const { cron } of compiled[kind]) {
    const at = cron.previousRuns(1, new Date(beforeMs))[0]?.getTime();
    if (at !== undefined && at < beforeMs && (latest === undefined || at > latest)) latest = at;
  }
  return latest;
}

/** The first tick of each kind after `afterMs`, then the soonest of them (start before stop before restart on a tie). */
export function nextTicks(compiled: CompiledSchedule, afterMs: number): { start?: Tick; stop?: Tick; restart?: Tick; soonest?: Tick } {
  const next = { start: nextTick(compiled, 'start', afterMs), stop: nextTick(compiled, 'stop', afterMs), restart: nextTick(compiled, 'restart', afterMs) };
  let soonest: Tick | undefined;
  for (const kind of TICK_KINDS) if (next[kind] && (!soonest || next[kind]!.at < soonest.at)) soonest = next[kind];
  return { ...next, soonest };
}

/**
 * The ticks in (fromMs, toMs], oldest first, at most `limit` of them: what a scheduler that was
 * down from `fromMs` to `toMs` missed. `truncated` tells that more ticks fell in the interval
 * (a per-minute expression over a long outage); the ticks kept are the oldest.
 */
export function ticksBetween(compiled: CompiledSchedule, fromMs: number, toMs: number, limit = 1000): { ticks: Tick[]; truncated: boolean } {
  const ticks: Tick[] = [];
  let truncated = false;
  for (const kind of TICK_KINDS) {
    let after = fromMs;
    // One kind's ticks come in order, so its first `limit` are all the merge below can keep.
    for (let count = 0; ; count++) {
      const tick = nextTick(compiled, kind, after);
      if (!tick || tick.at > toMs) break;
      if (count === limit) {
        truncated = true;
        break;
      }
      ticks.push(tick);
      after = tick.at;
    }
  }
  ticks.sort((a, b) => a.at - b.at || TICK_KINDS.indexOf(a.kind) - TICK_KINDS.indexOf(b.kind));
  if (ticks.length > limit) truncated = true;
  return { ticks: ticks.slice(0, limit), truncated };
}

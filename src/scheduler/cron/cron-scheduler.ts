// Acts on the cron ticks of the stored DAGs: a start tick queues a run of the DAG, a stop tick
// stops its active runs, a restart tick stops them, waits `restartWaitSec` and queues a new run.
// It keeps the planner in step with the DAG files and stores when ticks were last acted on, so
// that the ticks that fell while the server was down are logged and listed, never lost silently.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RunStatus, isoTime, type Clock, type Timers, type CronState, type CronStateStore, type MissedTick, type Schedule } from '../../core/index.ts';
import { CronPlanner, type DueTick } from './cron-planner.ts';
import { CronTicker } from './cron-ticker.ts';
import { log } from '../../logging/index.ts';

/** What the scheduler reads of a stored DAG. */
export interface CronDag {
  name: string;
  schedule: Schedule;
  skipIfSuccessful: boolean;
  restartWaitSec: number;
}

/** What the cron scheduler needs of the engine and the stores. */
export interface CronEngine {
  /** The DAG files there are now. */
  fileNames(): Promise<string[]>;
  /** Undefined: no such file; `dag` undefined: a file whose definition cannot run (it has errors). */
  loadDag(fileName: string): Promise<{ dag?: CronDag } | undefined>;
  /** A new run of the stored DAG, with its default params, through the DAG's queue. */
  enqueue(fileName: string): Promise<{ dagRunId: string }>;
  /** Stops every active run of a DAG name; resolves once they have finished. */
  stopAll(name: string): Promise<void>;
  latestRun(name: string): { status: number; startedAt: string } | undefined;
  isSuspended(fileName: string): boolean;
}

export interface CronSchedulerOptions {
  engine: CronEngine;
  state: CronStateStore;
  clock: Clock;
  /** What ticks and `restartWaitSec` wait on (the service's: Node's timers, which keep no process alive). */
  timers: Timers;
  /** The zone of expressions without `CRON_TZ=`; absent: the server's. */
  timeZone?: string;
  /** One line for each thing an operator should hear of (missed, skipped or failed ticks); stderr by default. */
  log?: (line: string) => void;
}

/** Missed ticks logged and listed per DAG for one outage (the first), and kept listed per DAG (the newest). */
export const MISSED_LISTED = 100;

/**
 * A tick handed out later than this after it fell (the process was paused, the system slept, the
 * clock jumped) is missed, as if the server had been down: run then, it would start at a time
 * nobody chose, and a minute schedule would start a run for each minute lost.
 */
export const LATE_TICK_MS = 60_000;

/**
 * DAG files read in one turn of the event loop when all are read (at start, by the rescan): a
 * small file is read and parsed on this thread, so ten thousand at once would hold it for long.
 */
const FILES_PER_TURN = 64;


type Phase = 'new' | 'starting' | 'running' | 'closed';

export class CronScheduler {
  private readonly engine: CronEngine;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly log: (line: string) => void;
  private readonly planner: CronPlanner;
  private readonly ticker: CronTicker;
  /** The scheduled DAGs by file name, with their schedule as a key that tells an edit from a rewrite. */
  private readonly dags = new Map<string, { dag: CronDag; key: string }>();
  private readonly missed = new Map<string, MissedTick[]>();
  /** Each file's syncs run one after another, so the last change read is the one kept. */
  private readonly syncs = new Map<string, Promise<void>>();
  /** Ticks being acted on: stored as unfinished until they are, so that a crash lists them as missed. */
  private readonly acting = new Map<Promise<void>, DueTick>();
  /** Restart ticks whose wait the closing cut short: they are missed. */
  private readonly cutShort: DueTick[] = [];
  private readonly waits = new Set<{ timer: unknown; resolve: () => void }>();
  /** DAGs resumed before the first load finished, and when: their ticks until then are not due. */
  private readonly resumedEarly = new Map<string, number>();
  /** Settled once every stored DAG is planned (or the scheduler closed first). */
  private readonly planned: Promise<void>;
  private markPlanned!: () => void;
  private starting: Promise<void> | undefined;
  private phase: Phase = 'new';
  private refreshQueued = false;
  private saving: Promise<void> | undefined;
  private saveAgain = false;

  constructor(private readonly options: CronSchedulerOptions) {
    this.engine = options.engine;
    this.clock = options.clock;
    this.timers = options.timers;
    this.log = options.log ?? ((line) => log.warn(line));
    this.planner = new CronPlanner({ clock: this.clock, isSuspended: (fileName) => this.engine.isSuspended(fileName), timeZone: options.timeZone });
    this.ticker = new CronTicker({ planner: this.planner, clock: this.clock, timers: this.timers, onTicks: (ticks) => this.onTicks(ticks) });
    this.planned = new Promise((resolve) => { this.markPlanned = resolve; });
  }

  /**
   * Plans every stored DAG, lists the ticks missed since the server last acted on ticks (a DAG
   * whose schedule is not the one stored then missed none), then acts on ticks as they fall.
   * Never rejects: the server need not wait for it (what depends on the plan waits on `ready`).
   */
  start(): Promise<void> {
    if (this.phase === 'new') {
      this.phase = 'starting';
      this.starting = this.planAll(this.clock.now())
        .catch((error: unknown) => this.log(`troupe: cron: cannot plan the schedules (${messageOf(error)}); DAGs are scheduled as the rescan reads them`))
        .finally(() => {
          if (this.phase === 'starting') this.run();
          this.markPlanned();
        });
    }
    return this.starting ?? Promise.resolve();
  }

  /** Started and not closed: schedules fire (the metric troupe_scheduler_running). */
  get running(): boolean {
    return this.phase === 'starting' || this.phase === 'running';
  }

  /**
   * Settles once every stored DAG is planned and the ticks missed while the server was down are
   * listed: `nextRun` and `missedRuns` are complete from then on.
   */
  ready(): Promise<void> {
    return this.planned;
  }

  private async planAll(startedAt: number): Promise<void> {
    const saved = await this.options.state.read().catch((error: unknown) => {
      this.log(`troupe: cron: cannot read when ticks were last acted on (${messageOf(error)}); missed ticks cannot be told this time`);
      return undefined;
    });
    for (const [fileName, ticks] of Object.entries(saved?.missed ?? {})) this.missed.set(fileName, ticks);
    const fileNames = await this.engine.fileNames();
    // A close while the files are read leaves the rest unread.
    const loaded = await inBatches(fileNames, async (fileName) => [fileName, this.phase === 'starting' ? await this.loadDag(fileName) : undefined] as const);
    if (this.phase !== 'starting') return;
    for (const [fileName, found] of loaded) {
      const dag = found?.dag;
      const key = dag ? scheduleKey(dag.schedule) : '';
      if (!dag || key === '') continue;
      this.dags.set(fileName, { dag, key });
      this.planner.set(fileName, dag.schedule, saved && saved.schedules[fileName] === key ? saved.handedUpTo : startedAt);
    }
    for (const [fileName, at] of this.resumedEarly) this.planner.skipUntil(fileName, at);
    const present = new Set(fileNames);
    for (const fileName of this.missed.keys()) if (!present.has(fileName)) this.missed.delete(fileName);
    if (saved) this.noteMissed(saved, startedAt, present);
    this.run(startedAt);
  }

  private run(since?: number): void {
    this.phase = 'running';
    this.resumedEarly.clear();
    this.ticker.start(since);
    this.save();
  }

  /** When the DAG's next scheduled run starts; undefined when it has none, cannot run, or is suspended. */
  nextRun(fileName: string, at?: number): number | undefined {
    return this.planner.nextRun(fileName, at);
  }

  /** The ticks the DAG missed while the server was down, oldest first. */
  missedRuns(fileName: string): MissedTick[] {
    return this.missed.get(fileName) ?? [];
  }

  /** A DAG file was added, edited or removed: read it again. Resolves once the planner has it. */
  dagChanged(fileName: string): Promise<void> {
    if (this.phase === 'closed') return Promise.resolve();
    // Changed before the first load finished: read again after it, and answered then.
    if (this.phase !== 'running') return this.planned.then(() => this.dagChanged(fileName));
    const synced = (this.syncs.get(fileName) ?? Promise.resolve())
      .then(() => this.sync(fileName))
      .catch((error: unknown) => this.log(`troupe: cron: cannot read DAG ${fileName} (${messageOf(error)}); its schedule is unchanged`));
    this.syncs.set(fileName, synced);
    void synced.then(() => { if (this.syncs.get(fileName) === synced) this.syncs.delete(fileName); });
    return synced;
  }

  /** Renamed through the API: its schedule, the ticks it missed and its place in time go with it. */
  async dagRenamed(from: string, to: string): Promise<void> {
    if (this.phase !== 'running') await this.planned;
    if (this.phase !== 'running') return;
    const known = this.dags.get(from);
    if (known && !this.dags.has(to)) {
      this.dags.delete(from);
      this.dags.set(to, known);
      this.planner.rename(from, to);
    }
    const missed = this.missed.get(from);
    this.missed.delete(from);
    if (missed) this.missed.set(to, missed);
    this.changed();
    await Promise.all([this.dagChanged(from), this.dagChanged(to)]);
  }

  /** Suspended or resumed through the API; a DAG resumed does not catch up the ticks it slept through. */
  suspendChanged(fileName: string, suspended: boolean): void {
    if (this.phase === 'new' || this.phase === 'starting') {
      if (suspended) this.resumedEarly.delete(fileName);
      else this.resumedEarly.set(fileName, this.clock.now());
      return;
    }
    if (this.phase !== 'running') return;
    if (!suspended) this.planner.skipUntil(fileName);
    this.changed();
  }

  /** Reads every DAG file again: the safety net for changes the directory watch missed. */
  async rescan(): Promise<void> {
    if (this.phase !== 'running') return;
    let present: string[];
    try {
      present = await this.engine.fileNames();
    } catch (error) {
      this.log(`troupe: cron: cannot list the DAGs directory (${messageOf(error)}); the schedules are unchanged`);
      return;
    }
    const names = new Set([...present, ...this.dags.keys(), ...this.missed.keys()]);
    await inBatches([...names], (fileName) => this.dagChanged(fileName));
  }

  /** No tick is acted on from here; the actions under way end (a restart's wait is cut short) and the state is stored. */
  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    const wasRunning = this.phase === 'running';
    this.phase = 'closed';
    this.markPlanned();
    this.ticker.stop();
    for (const waiting of this.waits) {
      this.timers.clearTimeout(waiting.timer);
      waiting.resolve();
    }
    this.waits.clear();
    await Promise.allSettled([this.starting, ...this.syncs.values(), ...this.acting.keys()]);
    await this.saving;
    // Ticks that fall from here to the next start are the next start's missed ticks.
    if (wasRunning) await this.options.state.write(this.snapshot()).catch((error: unknown) => this.log(`troupe: cron: cannot store when ticks were last acted on: ${messageOf(error)}`));
  }

  private async loadDag(fileName: string): Promise<{ dag?: CronDag } | undefined> {
    try {
      return await this.engine.loadDag(fileName);
    } catch (error) {
      this.log(`troupe: cron: cannot read DAG ${fileName} (${messageOf(error)}); it is not scheduled`);
      return { dag: undefined };
    }
  }

  private async sync(fileName: string): Promise<void> {
    const found = await this.engine.loadDag(fileName);
    if (this.phase !== 'running') return;
    const dag = found?.dag;
    const key = dag ? scheduleKey(dag.schedule) : '';
    const known = this.dags.get(fileName);
    let changed = false;
    if (!found && this.missed.delete(fileName)) changed = true;
    if (!dag || key === '') {
      if (known) {
        this.dags.delete(fileName);
        this.planner.remove(fileName);
        changed = true;
      }
    } else {
      this.dags.set(fileName, { dag, key });
      // The same schedule rewritten keeps its place: a tick falling right now is not dropped.
      if (known?.key !== key) {
        this.planner.set(fileName, dag.schedule);
        changed = true;
      }
    }
    if (changed) this.changed();
  }

  /** Lists and logs the ticks the stopped server did not act on: those it was acting on, then those that fell while it was down. */
  private noteMissed(saved: CronState, startedAt: number, present: Set<string>): void {
    for (const tick of saved.unfinished) if (present.has(tick.fileName)) this.listMissed(tick, startedAt, 'the server stopped while acting on it');
    const { ticks, truncated } = this.planner.due(saved.handedUpTo, startedAt, MISSED_LISTED);
    for (const tick of ticks) this.listMissed(tick, startedAt, 'the server was not running');
    for (const fileName of truncated) this.log(`troupe: cron: DAG ${fileName} missed more than ${MISSED_LISTED} ticks; the first ${MISSED_LISTED} are listed`);
  }

  private listMissed(tick: CronState['unfinished'][number], noticedAt: number, why: string): void {
    this.log(`troupe: cron: DAG ${tick.fileName} missed its ${tick.kind} tick at ${isoTime(tick.at)} (${tick.expression}): ${why}; listed, not run`);
    const list = [...(this.missed.get(tick.fileName) ?? []), { kind: tick.kind, scheduledAt: isoTime(tick.at), expression: tick.expression, noticedAt: isoTime(noticedAt) }];
    this.missed.set(tick.fileName, list.slice(-MISSED_LISTED));
  }

  private onTicks(ticks: DueTick[]): void {
    const now = this.clock.now();
    const late = new Map<string, DueTick[]>();
    for (const tick of ticks) {
      const planned = this.dags.get(tick.fileName);
      if (!planned) continue;
      if (now - tick.at > LATE_TICK_MS) {
        if (!late.get(tick.fileName)?.push(tick)) late.set(tick.fileName, [tick]);
        continue;
      }
      const acted: Promise<void> = this.act(tick, planned.dag)
        .catch((error: unknown) => this.log(`troupe: cron: the ${tick.kind} tick of DAG ${tick.fileName} at ${isoTime(tick.at)} failed: ${messageOf(error)}`))
        .finally(() => {
          this.acting.delete(acted);
          this.save();
        });
      this.acting.set(acted, tick);
    }
    for (const [fileName, missed] of late) {
      const listed = missed.slice(-MISSED_LISTED);
      if (missed.length > listed.length) this.log(`troupe: cron: DAG ${fileName} missed ${missed.length} ticks while the server was paused or its clock jumped; the newest ${MISSED_LISTED} are listed`);
      for (const tick of listed) this.listMissed(tick, now, 'the server was paused or its clock jumped');
    }
    this.save();
  }

  private async act(tick: DueTick, dag: CronDag): Promise<void> {
    if (tick.kind === 'stop') return this.engine.stopAll(dag.name);
    if (tick.kind === 'restart') {
      await this.engine.stopAll(dag.name);
      await this.wait(dag.restartWaitSec * 1000);
      // Removed, suspended or shut down meanwhile: nothing starts.
      if (this.phase === 'closed') this.cutShort.push(tick);
      if (this.phase !== 'running' || !this.dags.has(tick.fileName) || this.engine.isSuspended(tick.fileName)) return;
    } else if (dag.skipIfSuccessful && this.succeededSincePreviousTick(tick, dag.name)) {
      this.log(`troupe: cron: skipped the start tick of DAG ${tick.fileName} at ${isoTime(tick.at)}: skipIfSuccessful, and its latest run succeeded after the previous tick`);
      return;
    }
    await this.engine.enqueue(tick.fileName);
  }

  /** Dagu's rule for skipIfSuccessful: the latest run succeeded and started at or after the start tick before this one. */
  private succeededSincePreviousTick(tick: DueTick, name: string): boolean {
    const latest = this.engine.latestRun(name);
    if (!latest || latest.status !== RunStatus.Succeeded) return false;
    const previous = this.planner.previousTick(tick.fileName, 'start', tick.at);
    const startedAt = Date.parse(latest.startedAt);
    return previous !== undefined && !Number.isNaN(startedAt) && startedAt >= previous;
  }

  private wait(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = { timer: undefined as unknown, resolve };
      waiting.timer = this.timers.setTimeout(() => {
        this.waits.delete(waiting);
        resolve();
      }, ms);
      this.waits.add(waiting);
    });
  }

  /**
   * The planner changed: the ticker re-arms and the state is stored, once per turn of the event
   * loop however many DAG files changed in it (a checkout of a thousand files re-arms once).
   */
  private changed(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    setImmediate(() => {
      this.refreshQueued = false;
      if (this.phase !== 'running') return;
      this.ticker.refresh();
      this.save();
    });
  }

  /** Stores the state; one write at a time, the newest state written after the one under way. */
  private save(): void {
    if (this.phase !== 'running') return;
    if (this.saving) {
      this.saveAgain = true;
      return;
    }
    this.saving = this.options.state.write(this.snapshot())
      .catch((error: unknown) => this.log(`troupe: cron: cannot store when ticks were last acted on: ${messageOf(error)}`))
      .finally(() => {
        this.saving = undefined;
        if (this.saveAgain) {
          this.saveAgain = false;
          this.save();
        }
      });
  }

  private snapshot(): CronState {
    return {
      handedUpTo: this.ticker.lastHandedAt,
      schedules: Object.fromEntries([...this.dags].map(([fileName, { key }]) => [fileName, key])),
      missed: Object.fromEntries(this.missed),
      unfinished: [...this.acting.values(), ...this.cutShort].map(({ fileName, kind, at, expression }) => ({ fileName, kind, at, expression })),
    };
  }
}

/** The schedule's expressions by kind, as written: equal keys tick alike. Empty when it has none. */
function scheduleKey(schedule: Schedule): string {
  if (schedule.start.length + schedule.stop.length + schedule.restart.length === 0) return '';
  return JSON.stringify([schedule.start, schedule.stop, schedule.restart].map((entries) => entries.map((entry) => entry.expression)));
}

async function inBatches<T, R>(items: T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += FILES_PER_TURN) {
    if (start > 0) await nextTurn();
    results.push(...await Promise.all(items.slice(start, start + FILES_PER_TURN).map(each)));
  }
  return results;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// History retention (`histRetentionDays`): the runs of a DAG older than its retention are removed,
// with their sub DAG runs and log files, by a sweep at start and then every hour, off the request
// path. The choice of runs is pure (expiredRunTrees); the sweep reads through the by-name index
// and removes in small batches, yielding to the event loop between them. A cleanup asked for
// (`troupe cleanup`, `POST /dag-runs/cleanup`) goes the same way, in turn with the sweeps.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DAG_DEFAULTS, isFinalRunStatus, subRunsUnder, type Clock, type RunRecord, type RunSummaryRow } from '../core/index.ts';
import type { Definitions } from '../catalog/index.ts';
import { errorText, log } from '../logging/index.ts';

const DAY_MS = 86_400_000;
const RETENTION_SWEEP_EVERY_MS = 3_600_000;
/**
 * Runs read and removed per turn of the event loop. 10,000 runs (8,000 expired, three files
 * each): 64 a turn held the loop 20 - 35 ms at p99, 16 a turn 5 - 8 ms, in the same 3 - 4 s.
 */
const BATCH = 16;

/** What the sweep needs of the store (store/run-history.ts). */
export interface RetentionStore {
  runNames(): string[];
  /** Oldest first, from the index alone. */
  runsCreatedBefore(name: string, beforeMs: number, limit: number, after?: { createdAtMs: number; dagRunId: string }): Array<{ createdAtMs: number; dagRunId: string }>;
  get(name: string, dagRunId: string): RunRecord | undefined;
  /** The newest run of the name, sub DAG runs included, from one index read. */
  newestRun(name: string): RunSummaryRow | undefined;
  /** A removal for one sweep (it may keep what it read of the log folders until the sweep ends). */
  remover(): RunRemoval;
}

export interface RunRemoval {
  /** Removes runs, files and rows, the rows in the order given; answers how many. A run not finished is kept. */
  removeRuns(records: RunRecord[]): Promise<number>;
}

/**
 * However short the retention, a run is kept this long after it ends: clients polling for its end
 * read it, and its log files are closed, before it can go.
 */
export const MIN_RETENTION_MS = 60_000;

/** Runs finished (or, lacking a finish time, created) before this are expired; undefined: kept forever. */
export function retentionCutoff(nowMs: number, days: number): number | undefined {
  return days < 0 ? undefined : nowMs - Math.max(days * DAY_MS, MIN_RETENTION_MS);
}

/** When the run last changed: its end, or its creation when it has no end time. */
function lastActivityMs(record: RunRecord): number {
  const finished = record.finishedAt === '' ? Number.NaN : Date.parse(record.finishedAt);
  return Number.isNaN(finished) ? record.createdAtMs : Math.max(finished, record.createdAtMs);
}

/**
 * The runs to remove among `candidates`, each a tree in removal order (its sub DAG runs, deepest
 * first, then the root). Only a finished root run whose last activity is before the cutoff is
 * taken, with the sub DAG runs it reaches through `children` that belong to it (their root is it);
 * a tree with a run still active anywhere in it is kept whole.
 */
export function expiredRunTrees(candidates: RunRecord[], cutoffMs: number, lookup: (name: string, dagRunId: string) => RunRecord | undefined): RunRecord[][] {
  const trees: RunRecord[][] = [];
  for (const root of candidates) {
    if (root.parentDAGRunId !== '' || !isFinalRunStatus(root.status) || lastActivityMs(root) >= cutoffMs) continue;
    const tree = [root, ...subRunsUnder(root, lookup)];
    const active = tree.some((run) => !isFinalRunStatus(run.status));
    if (!active) trees.push(tree.reverse());
  }
  return trees;
}

/** A cleanup asked for: the finished runs of `name` (every DAG's without it) older than `retentionDays` (0: all). */
export interface CleanupRequest {
  name?: string;
  retentionDays: number;
  /** Only list what would go. */
  dryRun?: boolean;
}

export interface CleanupResult {
  /** The root runs removed (with dryRun, those that would be), oldest first per DAG name. */
  dagRuns: Array<{ name: string; dagRunId: string }>;
  /** How many runs went, sub DAG runs included; 0 on a dry run. */
  removed: number;
}

export interface RetentionOptions {
  store: RetentionStore;
  /** Reads a DAG file's `histRetentionDays`. */
  definitions: Pick<Definitions, 'loadDag'>;
  clock: Clock;
  everyMs?: number;
  onError?: (error: unknown) => void;
}

export class RetentionSweeper {
  private readonly clock: Clock;
  private timer: NodeJS.Timeout | undefined;
  /** Sweeps run one after another; this is the last one asked for. */
  private tail: Promise<number> = Promise.resolve(0);
  private closed = false;
  private sweeping = 0;

  constructor(private readonly options: RetentionOptions) {
    this.clock = options.clock;
  }

  /** A first sweep now, then one every `everyMs`; the timer does not keep the process alive. */
  start(): void {
    const sweepLogged = () => void this.sweep().catch(this.options.onError ?? ((error) => log.error({ error: errorText(error) }, 'history retention sweep failed')));
    sweepLogged();
    // A tick that finds a sweep still under way (a huge backlog) leaves it to finish: none pile up.
    this.timer = setInterval(() => { if (this.sweeping === 0) sweepLogged(); }, this.options.everyMs ?? RETENTION_SWEEP_EVERY_MS).unref();
  }

  /** Sweeps every DAG's history once (after any sweep under way); answers how many runs it removed. */
  sweep(): Promise<number> {
    this.sweeping++;
    const next = this.tail.catch(() => 0).then(() => this.sweepAll()).finally(() => { this.sweeping--; });
    this.tail = next;
    return next;
  }

  /**
   * Removes (or, dry, lists) the finished runs a cleanup asks for, after any sweep under way. Unlike
   * the sweep's, its retention has no minimum: 0 takes every finished run, as the user asked.
   * A run queued or active, or with a sub DAG run active, is never taken.
   */
  cleanup(request: CleanupRequest): Promise<CleanupResult> {
    const next = this.tail.catch(() => 0).then(() => this.cleanupNow(request));
    this.tail = next.then(({ removed }) => removed);
    return next;
  }

  /** Stops the timer and waits for the sweep under way, which ends at its next batch. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.tail.catch(() => undefined);
  }

  private async sweepAll(): Promise<number> {
    let removed = 0;
    const remover = this.options.store.remover();
    for (const name of this.options.store.runNames()) {
      if (this.closed) break;
      removed += await this.sweepDag(name, remover);
    }
    return removed;
  }

  /** The retention of the DAG file a name's newest run came from; the default for inline and deleted DAGs. */
  private async retentionDays(name: string): Promise<number> {
    const fileName = this.options.store.newestRun(name)?.fileName;
    const loaded = fileName ? await this.options.definitions.loadDag(fileName).catch(() => undefined) : undefined;
    return loaded?.dag?.name === name ? loaded.dag.histRetentionDays : DAG_DEFAULTS.histRetentionDays;
  }

  private async sweepDag(name: string, remover: RunRemoval): Promise<number> {
    const cutoffMs = retentionCutoff(this.clock.now(), await this.retentionDays(name));
    if (cutoffMs === undefined) return 0;
    let removed = 0;
    for await (const trees of this.expiredBatches(name, cutoffMs)) removed += await remover.removeRuns(trees.flat());
    return removed;
  }

  private async cleanupNow({ name, retentionDays, dryRun }: CleanupRequest): Promise<CleanupResult> {
    const { store } = this.options;
    const cutoffMs = this.clock.now() - retentionDays * DAY_MS;
    const remover = store.remover();
    const result: CleanupResult = { dagRuns: [], removed: 0 };
    for (const runName of name === undefined ? store.runNames() : [name]) {
      for await (const trees of this.expiredBatches(runName, cutoffMs)) {
        const roots = trees.map((tree) => tree[tree.length - 1]);
        if (dryRun) {
          result.dagRuns.push(...roots.map(({ dagRunId }) => ({ name: runName, dagRunId })));
          continue;
        }
        result.removed += await remover.removeRuns(trees.flat());
        // A root that turned active meanwhile is kept by the removal: only those gone are told.
        result.dagRuns.push(...roots.filter(({ dagRunId }) => store.get(runName, dagRunId) === undefined).map(({ dagRunId }) => ({ name: runName, dagRunId })));
      }
    }
    return result;
  }

  /** The expired run trees of a name, a batch at a time, a turn of the event loop between batches. */
  private async *expiredBatches(name: string, cutoffMs: number): AsyncGenerator<RunRecord[][]> {
    const { store } = this.options;
    let after: { createdAtMs: number; dagRunId: string } | undefined;
    while (!this.closed) {
      const page = store.runsCreatedBefore(name, cutoffMs, BATCH, after);
      if (page.length === 0) return;
      after = page[page.length - 1];
      const candidates = page.map(({ dagRunId }) => store.get(name, dagRunId)).filter((record) => record !== undefined);
      const trees = expiredRunTrees(candidates, cutoffMs, (runName, id) => store.get(runName, id));
      if (trees.length > 0) yield trees;
      await nextTurn();
    }
  }
}

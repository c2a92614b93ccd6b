// The engine on a home, without the API server: the store, the pool, the catalog and the scheduler
// parts a run needs. The troupe command's verbs open this when no server owns the home; the server
// (main.ts) builds its API on the same. Nothing here loads the HTTP server, auth or metrics.
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeHomePrivate, tightenStoreFiles } from './home-modes.ts';
import { Engine, cronEngineOf, type EngineParts } from './engine/index.ts';
import { CronScheduler, RetentionSweeper } from './scheduler/index.ts';
import { DagFileChanges, DagsWatcher, Definitions } from './catalog/index.ts';
import { InlineDispatcher, PiscinaDispatcher, TaskPool, endOrphanSteps, spawnMethod, type SpawnMode } from './executors/index.ts';
import { HomeLock } from './home-lock.ts';
import { log, setLogFormat } from './logging/index.ts';
import { DefinitionParser, exampleSpec, filterSystemEnv, parseWorkerFile, type ParseAnswer, type ParseTask } from './definition/index.ts';
import { CronStateFile, DagFiles, EventRetention, LmdbQueueStore, LmdbRunStore, LogFiles, RunHistory } from './store/index.ts';
import { completeSettings, type Settings, type SettingsInput } from './config/index.ts';
import { SpanExports } from './tracing/index.ts';
import type { SpanSink } from './core/index.ts';

/** How long the DAG listing waits after the last file change before it reads the changed files in the background. */
const LISTING_WARM_DELAY_MS = 250;

/**
 * What `startTroupe` and `openEngine` take: any of the settings (src/config/settings.ts names each
 * with its default), the home always (its folders follow it unless given). Completed once, at the top of each.
 */
export type TroupeConfig = SettingsInput & Pick<Settings, 'home'>;

export interface EngineHandle {
  engine: Engine;
  /** The stored DAGs' definitions: parsed once per change, listed, watched. */
  catalog: Definitions;
  runs: LmdbRunStore;
  dags: DagFiles;
  logs: LogFiles;
  /** Removes runs older than their DAG's `histRetentionDays`: at start, then hourly. */
  retention: RetentionSweeper;
  /** Keeps the event log to eventRetentionMs and eventMaxCount: at start, then every minute. */
  eventRetention: EventRetention;
  /** Runs the DAGs on their `schedule`; lists the ticks missed while the server was down. Its nextRun and missedRuns are complete once `cron.ready()` settles. */
  cron: CronScheduler;
  /** How step processes start: posix_spawn (the addon) or child_process (the fallback). */
  spawnMethod: SpawnMode;
  /** Where traced runs' spans are exported: its counts feed the metrics. */
  spans: SpanSink;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** A thread and its step host start now, while the caller records the run it is about to start. */
  warm?: boolean;
  /** Where runs execute beside this process (distributed dispatch), or where a worker's runs report to. */
  parts?: EngineParts;
  /** Steps run on the step pool even in a command's engine (a worker's engine runs many runs at once). */
  stepPool?: boolean;
  /** The store is scratch: its commits are not synced to disk (a worker's, whose server keeps the records). */
  scratchStore?: boolean;
}

export async function openEngine(config: Omit<TroupeConfig, 'host' | 'port'>, options: OpenOptions = {}): Promise<EngineHandle> {
  return (await openHome(completeSettings(config), options)).handle;
}

/** The engine on the home, and the home's lock (the server records in it where it listens). */
export async function openHome(config: Settings, options: OpenOptions = {}): Promise<{ handle: EngineHandle; lock: HomeLock }> {
  // Before the pool starts: its workers write their lines in the same format.
  setLogFormat(config.logFormat);
  const firstStart = !(await exists(config.dataDir));
  const looser = await makeHomePrivate(config);
  // Once per start of the service: a command's every verb would repeat it.
  if (looser && !config.commandOnly) log.warn(looser);
  // Before anything of the home is opened or changed: a second process on it stops here.
  const lock = HomeLock.acquire(config.dataDir);
  if (lock.reserveGivenUp) log.warn(`the file system of ${config.dataDir} is full: the room kept in ${join(config.dataDir, 'troupe.reserve')} was given up to open the home; reads are answered, writes fail with 507 until space is freed`);
  try {
    const dags = new DagFiles(config.dagsDir);
    if (config.writeExample && firstStart && (await readdir(config.dagsDir)).length === 0) {
      await dags.write('example', exampleSpec(), 'create');
    }
    return { handle: await openLocked(config, dags, lock, options), lock };
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function openLocked(config: Settings, dags: DagFiles, lock: HomeLock, options: OpenOptions): Promise<EngineHandle> {
  const warm = options.warm === true;
  const runs = new LmdbRunStore(config.dataDir, { scratch: options.scratchStore === true });
  await tightenStoreFiles(config.dataDir);
  const logs = new LogFiles(config.logDir);
  const spawnMode = config.spawnMode === 'auto' ? spawnMethod : config.spawnMode;
  // Steps a crashed predecessor left running end before their runs are settled or run again.
  const stepRegistryDir = join(config.dataDir, 'steps');
  await endOrphanSteps(stepRegistryDir, { log: (line) => log.warn(line) });
  await mkdir(stepRegistryDir, { recursive: true });
  const poolOptions = { maxThreads: config.maxThreads, spawnMode, stepRegistryDir, ...(warm ? { minThreads: 1, prepareHost: true } : {}) };
  // A command runs its shell steps on its own thread: no thread to start before its first step.
  const dispatcher = config.commandOnly && !options.stepPool ? new InlineDispatcher(poolOptions) : new PiscinaDispatcher(poolOptions);
  // Large definitions are parsed on a thread of their own, so no step waits behind a parse.
  const parsePool = new TaskPool<ParseTask, ParseAnswer>({ filename: parseWorkerFile, maxThreads: 1 });
  const catalog = new Definitions(dags, new DefinitionParser((task) => parsePool.run(task)));
  const queue = new LmdbQueueStore(runs);
  const queueLimits = new Map(config.queues.map(({ name, maxConcurrency }) => [name, maxConcurrency]));
  // Traced runs' spans go to their collectors; nothing is sent until a traced run ends a step.
  const spans = new SpanExports();
  const engine = new Engine({
    runs, queue, queueLimits, queuedStartDeadlineMs: config.queuedStartDeadlineMs, definitions: catalog, dags, logs, dispatcher,
    systemEnv: filterSystemEnv(process.env), clock: config.clock, commandOnly: config.commandOnly, spans, ...(config.otel ? { otel: config.otel } : {}), ...options.parts,
  });
  await engine.start();
  const retention = new RetentionSweeper({ store: new RunHistory(runs), definitions: catalog, clock: config.clock });
  if (!config.commandOnly) retention.start();
  const eventRetention = new EventRetention(runs, { maxAgeMs: config.eventRetentionMs, maxCount: config.eventMaxCount, clock: config.clock });
  if (!config.commandOnly) eventRetention.start();
  const cron = new CronScheduler({
    engine: cronEngineOf(engine, catalog, dags, runs), state: new CronStateFile(config.dataDir),
    clock: config.clock, timers: config.cronTimers, timeZone: config.timeZone,
  });
  const handEdits = new DagFileChanges(dags, (events) => runs.appendEvents(events));
  // The DAG listing reads every file it has not read (0.5 ms a file): done in the background once
  // the schedules are planned, and a moment after files change, so that the first listing after a
  // start or a bulk change (a deploy copying a thousand files) does not wait for it.
  let warming: NodeJS.Timeout | undefined;
  const warmListing = () => {
    clearTimeout(warming);
    warming = setTimeout(() => { catalog.listing.entries().catch(() => undefined); }, LISTING_WARM_DELAY_MS).unref();
  };
  if (!config.commandOnly) await handEdits.start();
  // Watching first: a file changed while the others are read is read again once they are.
  const watcher = new DagsWatcher({ dir: config.dagsDir, onChange: (fileName) => {
    void cron.dagChanged(fileName);
    void handEdits.noticed(fileName);
  }, onNoticed: (fileName) => {
    // While the watch runs, listings stat only the files a page shows: the others' entries are
    // forgotten here, as soon as the kernel tells of a change (a rewrite of the same size within a
    // clock tick keeps a file's stamp, so the shown ones are forgotten here too).
    catalog.listing.forget(fileName);
    warmListing();
  }, onRescan: () => {
    catalog.listing.recheck();
    void cron.rescan();
    void handEdits.rescan();
  }, onWatching: (watching) => catalog.listing.setWatched(watching) });
  if (!config.commandOnly) watcher.start();
  // Reading every DAG file takes about 0.5 ms a file: the API opens meanwhile, and what needs
  // the plan (a DAG's nextRun and missedRuns) waits for `cron.ready()`. Ticks due meanwhile are
  // handed out once it is planned, so none is lost.
  if (!config.commandOnly) {
    void cron.start();
    void cron.ready().then(warmListing, () => undefined);
  }
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= (async () => {
    watcher.close();
    clearTimeout(warming);
    await cron.close();
    await retention.close();
    await eventRetention.close();
    await engine.close();
    // The spans of the runs that ended are sent, within a bound: a collector that is down waits no longer.
    await spans.close();
    await dispatcher.close();
    await parsePool.close();
    await runs.close();
    lock.release();
  })());
  return { engine, catalog, runs, dags, logs, retention, eventRetention, cron, spawnMethod: spawnMode, spans, close };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

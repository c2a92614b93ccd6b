// The composition root: the one place that wires the ports to their implementations.
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { makeHomePrivate, tightenStoreFiles } from './home-modes.ts';
import { join } from 'node:path';
import { Engine, cronEngineOf } from './engine/index.ts';
import { CronScheduler, RetentionSweeper } from './scheduler/index.ts';
import { DagFileChanges, DagsWatcher, Definitions } from './catalog/index.ts';
import { PiscinaDispatcher, TaskPool, endOrphanSteps, spawnMethod, type SpawnMode } from './executors/index.ts';
import { HomeLock } from './home-lock.ts';
import { log, logRuns, setLogFormat, setLogLevel } from './logging/index.ts';
import { EventHub, RemoteNodes, UiFiles, loadTls, startServer, type ApiDeps, type RunningServer } from './http/index.ts';
import { ResourceHistory, TroupeMetrics, engineSources } from './ops/index.ts';
import { DefinitionParser, exampleSpec, filterSystemEnv, parseWorkerFile, type ParseAnswer, type ParseTask } from './definition/index.ts';
import { CronStateFile, DagFiles, EventRetention, LmdbIdempotencyStore, LmdbQueueStore, LmdbRunStore, LmdbUserStore, LogFiles, RunHistory } from './store/index.ts';
import { Auth, openOidcSignIn, type AuthSettings, type OidcSettings } from './auth/index.ts';
import { completeAuth, completeSettings, homePaths, type QueueConfig, type Settings, type SettingsInput, type TlsConfig } from './config/index.ts';

/** How long the DAG listing waits after the last file change before it reads the changed files in the background. */
const LISTING_WARM_DELAY_MS = 250;

/**
 * What `startTroupe` and `openEngine` take: any of the settings (src/config/settings.ts names each
 * with its default), the home always (its folders follow it unless given). Completed once, at the top of each.
 */
export type TroupeConfig = SettingsInput & Pick<Settings, 'home'>;

export type { QueueConfig, TlsConfig };
export { homePaths };

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
  close(): Promise<void>;
}

export interface Troupe extends EngineHandle {
  server: RunningServer;
  /** The event streams' subscriptions (`GET /events`): how many, events sent, clients dropped. */
  eventHub: EventHub;
  /** Where requests with `remoteNode` go; `replace` takes a reloaded list. */
  remoteNodes: RemoteNodes;
  /** Who may call the API: users, API keys, sessions (docs/auth.md); the one in force, after a reload too. */
  readonly auth: Auth;
  /**
   * Takes reloaded auth settings (SIGHUP): checked and opened whole before they replace the ones in
   * force, so that settings that cannot be used leave those as they were. Users, API keys and
   * sessions stay (they live in the store).
   */
  reloadAuth(auth: AuthSettings | undefined, oidc: OidcSettings | undefined): Promise<void>;
}

export async function readVersion(): Promise<string> {
  const text = await readFile(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

export async function openEngine(config: Omit<TroupeConfig, 'host' | 'port'>): Promise<EngineHandle> {
  return (await openHome(completeSettings(config))).handle;
}

/** The engine on the home, and the home's lock (the server records in it where it listens). */
async function openHome(config: Settings): Promise<{ handle: EngineHandle; lock: HomeLock }> {
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
    return { handle: await openLocked(config, dags, lock), lock };
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function openLocked(config: Settings, dags: DagFiles, lock: HomeLock): Promise<EngineHandle> {
  const runs = new LmdbRunStore(config.dataDir);
  await tightenStoreFiles(config.dataDir);
  const logs = new LogFiles(config.logDir);
  const spawnMode = config.spawnMode === 'auto' ? spawnMethod : config.spawnMode;
  // Steps a crashed predecessor left running end before their runs are settled or run again.
  const stepRegistryDir = join(config.dataDir, 'steps');
  await endOrphanSteps(stepRegistryDir, { log: (line) => log.warn(line) });
  await mkdir(stepRegistryDir, { recursive: true });
  const dispatcher = new PiscinaDispatcher({ maxThreads: config.maxThreads, spawnMode, stepRegistryDir });
  // Large definitions are parsed on a thread of their own, so no step waits behind a parse.
  const parsePool = new TaskPool<ParseTask, ParseAnswer>({ filename: parseWorkerFile, maxThreads: 1 });
  const catalog = new Definitions(dags, new DefinitionParser((task) => parsePool.run(task)));
  const queue = new LmdbQueueStore(runs);
  const queueLimits = new Map(config.queues.map(({ name, maxConcurrency }) => [name, maxConcurrency]));
  const engine = new Engine({ runs, queue, queueLimits, queuedStartDeadlineMs: config.queuedStartDeadlineMs, definitions: catalog, dags, logs, dispatcher, systemEnv: filterSystemEnv(process.env), clock: config.clock, commandOnly: config.commandOnly });
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
    await dispatcher.close();
    await parsePool.close();
    await runs.close();
    lock.release();
  })());
  return { engine, catalog, runs, dags, logs, retention, eventRetention, cron, spawnMethod: spawnMode, close };
}

/** The whole service: engine, scheduler and API server in this process (`troupe start-all`). */
export async function startTroupe(given: TroupeConfig): Promise<Troupe> {
  // Before the home is opened: settings that cannot be used (a remote node, a port) stop the start and leave nothing behind.
  const config = completeSettings(given);
  if (config.logLevel) setLogLevel(config.logLevel);
  const tls = config.tls ? await loadTls(config.tls) : undefined;
  const remoteNodes = new RemoteNodes(config.remoteNodes, { timeoutMs: config.remoteNodeTimeoutMs });
  const { handle, lock } = await openHome(config);
  const version = await readVersion();
  const startedAtMs = Date.now();
  const eventHub = new EventHub(handle.runs.events, { heartbeatMs: config.eventHeartbeatMs, backlogBytes: config.eventBacklogBytes });
  const metrics = new TroupeMetrics(engineSources({ ...handle, version, buildDate: await buildDate(), startedAtMs, eventStreams: () => eventHub.counts, watchEventDelay: (observe) => { eventHub.observeDelay = observe; } }));
  const resources = new ResourceHistory({ dir: config.dataDir, clock: config.resourceClock, timers: config.resourceClock });
  resources.start();
  const stopRunLines = logRuns((listener) => handle.engine.subscribe(listener));
  const closeOps = () => {
    stopRunLines();
    resources.close();
    metrics.close();
    void remoteNodes.close();
  };
  let server: RunningServer;
  let deps: ApiDeps & { auth: Auth };
  // Users and keys live beside the runs, in the same LMDB environment.
  const users = new LmdbUserStore(handle.runs.environment, config.dataDir);
  // So are the answers of idempotent submits; closed before the environment is.
  const idempotency = new LmdbIdempotencyStore(handle.runs.environment, config.dataDir, config.clock);
  idempotency.start();
  try {
    const auth = await Auth.open(config.auth, users, config.clock);
    const ui = config.ui ? await UiFiles.load() : undefined;
    if (config.ui && !ui) log.warn('the dashboard is not built (npm run build writes dist/ui): / answers 404; the API is served');
    deps = { engine: handle.engine, catalog: handle.catalog, runs: handle.runs, dags: handle.dags, logs: handle.logs, cron: handle.cron, retention: handle.retention, version, startedAtMs,
      clock: config.clock, idempotency, metrics, resources, remoteNodes, corsOrigins: config.corsOrigins, auth, oidc: openOidcSignIn(config.oidc, auth), eventHub, servesTls: tls !== undefined, ...(ui ? { ui } : {}) };
    server = await startServer(deps, { host: config.host, port: config.port, carrier: config.carrier, headersTimeoutMs: config.headersTimeoutMs, tls });
  } catch (error) {
    closeOps();
    await idempotency.close();
    await handle.close();
    throw error;
  }
  lock.announce(apiUrl(config.host, server.port, tls !== undefined));
  let closed: Promise<void> | undefined;
  return {
    ...handle,
    server,
    eventHub,
    remoteNodes,
    // Requests read deps.auth and deps.oidc as they come: a reload takes effect at the next one.
    get auth() {
      return deps.auth;
    },
    reloadAuth: async (settings, oidcSettings) => {
      const auth = await Auth.open(completeAuth(settings), users, config.clock, deps.auth);
      const oidc = openOidcSignIn(oidcSettings, auth);
      deps.auth = auth;
      deps.oidc = oidc;
    },
    // Admission stops first and the active runs get their grace period, the API answering
    // meanwhile; then requests stop, then the runs left are stopped (their steps get their signal).
    close: () => (closed ??= (async () => {
      // No scheduled run is queued once the server is stopping: the ticks from here are missed ones.
      await handle.cron.close();
      await handle.engine.drain(config.shutdownGraceMs);
      await server.close();
      closeOps();
      await idempotency.close();
      await handle.close();
    })()),
  };
}

/** The API's address as a client on this machine reaches it (a wildcard host is reached on loopback). */
export function apiUrl(host: string, port: number, secure = false): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `${secure ? 'https' : 'http'}://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}/api/v2`;
}

/** When the running code was built: the time its compiled file (or source, under tsx) was written. */
async function buildDate(): Promise<string> {
  try {
    return (await stat(new URL(import.meta.url))).mtime.toISOString();
  } catch {
    return '';
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

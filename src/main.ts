// The composition root: the one place that wires the ports to their implementations.
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { makeHomePrivate, tightenStoreFiles } from './home-modes.ts';
import { join } from 'node:path';
import { Engine, cronEngineOf } from './engine/index.ts';
import { CronScheduler, RetentionSweeper } from './scheduler/index.ts';
import { DagsWatcher } from './catalog/index.ts';
import { parseRemoteNodes, systemClock, type Clock, type RemoteNode, type Timers } from './core/index.ts';
import { PiscinaDispatcher, TaskPool, endOrphanSteps, spawnMethod, type SpawnMode } from './executors/index.ts';
import { HomeLock } from './home-lock.ts';
import { log, logRuns, setLogLevel, type LogLevel } from './logging/index.ts';
import { RemoteNodes, loadTls, startServer, type ApiDeps, type Carrier, type RunningServer, type TlsConfig } from './http/index.ts';
import { ResourceHistory, TroupeMetrics, engineSources } from './ops/index.ts';
import { DefinitionParser, exampleSpec, filterSystemEnv, parseWorkerFile, type ParseAnswer, type ParseTask } from './definition/index.ts';
import { CronStateFile, DagFiles, LmdbQueueStore, LmdbRunStore, LmdbUserStore, LogFiles, RunHistory } from './store/index.ts';
import { Auth, openOidcSignIn, type AuthSettings, type OidcSettings } from './auth/index.ts';

export interface TroupeConfig {
  host: string;
  port: number;
  home: string;
  dagsDir: string;
  dataDir: string;
  logDir: string;
  carrier?: Carrier | 'auto';
  /** node:http carrier: how long a client may take to send a request's headers (default 60 s). */
  headersTimeoutMs?: number;
  /** Worker threads of the step pool; steps per thread are not limited by it. */
  maxThreads?: number;
  /** `child_process` starts steps without the posix_spawn addon, as TROUPE_SPAWN=child_process does. */
  spawnMode?: 'child_process';
  /**
   * On close, how long active runs may go on to finish on their own (no new run is admitted
   * meanwhile, the API still answers) before the rest are stopped and recorded aborted. Default 0.
   */
  shutdownGraceMs?: number;
  /** Write an example DAG when the home is new (the service does; embedders need not). */
  writeExample?: boolean;
  /**
   * What "now" is: the times runs are stamped with, DAGs' next runs and history retention; the
   * system clock by default (tests move time with their own).
   */
  clock?: Clock;
  /**
   * What the cron scheduler waits on (the next tick, `restartWaitSec`); Node's timers by default.
   * Tests pass a ManualClock as both `clock` and `cronTimers`, and move time.
   */
  cronTimers?: Timers;
  /** The zone of schedule expressions without `CRON_TZ=`; the server's (TZ) by default. */
  timeZone?: string;
  /** Custom queues (config.yaml `queues.config`); every other queue is a DAG's own. */
  queues?: QueueConfig[];
  /** How long a dispatched queued run may take to become active before it fails (10 s; tests shorten it). */
  queuedStartDeadlineMs?: number;
  /** What the resource history's 5 s samples are stamped with and wait on; the system's by default (tests pass a ManualClock). */
  resourceClock?: Clock & Timers;
  /** The server log's level (`logLevel`): debug adds a line per request; info by default. */
  logLevel?: LogLevel;
  /** Nodes a request's `remoteNode` may name (config.yaml `remoteNodes`, Dagu's keys); validated at start. */
  remoteNodes?: RemoteNode[];
  /** The longest a request forwarded to a remote node may take (30 s; tests shorten it). */
  remoteNodeTimeoutMs?: number;
  /** Origins whose browsers may call the API (config.yaml `cors.allowOrigins`; `*`: any); none by default. */
  corsOrigins?: string[];
  /**
   * The troupe command's own engine (a verb run with no server on the home): it runs what the verb
   * starts and nothing else: no schedules, no retention sweep, queued runs stay queued, and runs
   * a crashed process left active stay for the next server or scheduler to recover.
   */
  commandOnly?: boolean;
  /** Authentication and roles (config.yaml `auth`, `permissions`): mode none without credentials by default (docs/auth.md). */
  auth?: AuthSettings;
  /** OIDC login (config.yaml `auth.oidc`), in auth modes oidc and builtin (docs/auth.md). */
  oidc?: OidcSettings;
  /** Serve HTTPS with this certificate and key (config.yaml `tls`); checked before the home is opened. */
  tls?: TlsConfig;
}

export type { TlsConfig };

export interface QueueConfig {
  name: string;
  maxConcurrency: number;
}

export interface EngineHandle {
  engine: Engine;
  runs: LmdbRunStore;
  dags: DagFiles;
  logs: LogFiles;
  /** Removes runs older than their DAG's `histRetentionDays`: at start, then hourly. */
  retention: RetentionSweeper;
  /** Runs the DAGs on their `schedule`; lists the ticks missed while the server was down. Its nextRun and missedRuns are complete once `cron.ready()` settles. */
  cron: CronScheduler;
  /** How step processes start: posix_spawn (the addon) or child_process (the fallback). */
  spawnMethod: SpawnMode;
  close(): Promise<void>;
}

export interface Troupe extends EngineHandle {
  server: RunningServer;
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
  return (await openHome(config)).handle;
}

/** The engine on the home, and the home's lock (the server records in it where it listens). */
async function openHome(config: Omit<TroupeConfig, 'host' | 'port'>): Promise<{ handle: EngineHandle; lock: HomeLock }> {
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

async function openLocked(config: Omit<TroupeConfig, 'host' | 'port'>, dags: DagFiles, lock: HomeLock): Promise<EngineHandle> {
  const runs = new LmdbRunStore(config.dataDir);
  await tightenStoreFiles(config.dataDir);
  const logs = new LogFiles(config.logDir);
  const spawnMode = config.spawnMode ?? spawnMethod;
  // Steps a crashed predecessor left running end before their runs are settled or run again.
  const stepRegistryDir = join(config.dataDir, 'steps');
  await endOrphanSteps(stepRegistryDir, { log: (line) => log.warn(line) });
  await mkdir(stepRegistryDir, { recursive: true });
  const dispatcher = new PiscinaDispatcher({ maxThreads: config.maxThreads, spawnMode, stepRegistryDir });
  // Large definitions are parsed on a thread of their own, so no step waits behind a parse.
  const parsePool = new TaskPool<ParseTask, ParseAnswer>({ filename: parseWorkerFile, maxThreads: 1 });
  const parser = new DefinitionParser((task) => parsePool.run(task));
  const queue = new LmdbQueueStore(runs);
  const queueLimits = new Map((config.queues ?? []).map(({ name, maxConcurrency }) => [name, maxConcurrency]));
  const engine = new Engine({ runs, queue, queueLimits, queuedStartDeadlineMs: config.queuedStartDeadlineMs, dags, logs, dispatcher, parser, systemEnv: filterSystemEnv(process.env), clock: config.clock, commandOnly: config.commandOnly });
  await engine.start();
  const retention = new RetentionSweeper({ store: new RunHistory(runs), definitions: engine.definitions, clock: config.clock });
  if (!config.commandOnly) retention.start();
  const cron = new CronScheduler({
    engine: cronEngineOf(engine, dags, runs), state: new CronStateFile(config.dataDir),
    clock: config.clock, timers: config.cronTimers, timeZone: config.timeZone,
  });
  // Watching first: a file changed while the others are read is read again once they are.
  const watcher = new DagsWatcher({ dir: config.dagsDir, onChange: (fileName) => {
    void cron.dagChanged(fileName);
  }, onNoticed: (fileName) => {
    // While the watch runs, listings stat only the files a page shows: the others' entries are
    // forgotten here, as soon as the kernel tells of a change (a rewrite of the same size within a
    // clock tick keeps a file's stamp, so the shown ones are forgotten here too).
    engine.definitions.catalog.forget(fileName);
  }, onRescan: () => {
    engine.definitions.catalog.recheck();
    void cron.rescan();
  }, onWatching: (watching) => engine.definitions.catalog.setWatched(watching) });
  if (!config.commandOnly) watcher.start();
  // Reading every DAG file takes about 0.5 ms a file: the API opens meanwhile, and what needs
  // the plan (a DAG's nextRun and missedRuns) waits for `cron.ready()`. Ticks due meanwhile are
  // handed out once it is planned, so none is lost.
  if (!config.commandOnly) void cron.start();
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= (async () => {
    watcher.close();
    await cron.close();
    await retention.close();
    await engine.close();
    await dispatcher.close();
    await parsePool.close();
    await runs.close();
    lock.release();
  })());
  return { engine, runs, dags, logs, retention, cron, spawnMethod: spawnMode, close };
}

/** The whole service: engine, scheduler and API server in this process (`troupe start-all`). */
export async function startTroupe(config: TroupeConfig): Promise<Troupe> {
  if (config.logLevel) setLogLevel(config.logLevel);
  // Before the home is opened: a node configured wrong stops the start and leaves nothing behind.
  const nodes = parseRemoteNodes(config.remoteNodes);
  const tls = config.tls ? await loadTls(config.tls) : undefined;
  const remoteNodes = new RemoteNodes(nodes, { timeoutMs: config.remoteNodeTimeoutMs });
  const { handle, lock } = await openHome(config);
  const version = await readVersion();
  const startedAtMs = Date.now();
  const metrics = new TroupeMetrics(engineSources({ ...handle, version, buildDate: await buildDate(), startedAtMs }));
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
  try {
    const auth = await Auth.open(config.auth ?? {}, users, config.clock);
    deps = { engine: handle.engine, catalog: handle.engine.definitions, runs: handle.runs, dags: handle.dags, logs: handle.logs, cron: handle.cron, retention: handle.retention, version, startedAtMs,
      clock: config.clock ?? systemClock, metrics, resources, remoteNodes, corsOrigins: config.corsOrigins, auth, oidc: openOidcSignIn(config.oidc, auth) };
    server = await startServer(deps, { host: config.host, port: config.port, carrier: config.carrier, headersTimeoutMs: config.headersTimeoutMs, tls });
  } catch (error) {
    closeOps();
    await handle.close();
    throw error;
  }
  lock.announce(apiUrl(config.host, server.port, tls !== undefined));
  let closed: Promise<void> | undefined;
  return {
    ...handle,
    server,
    remoteNodes,
    // Requests read deps.auth and deps.oidc as they come: a reload takes effect at the next one.
    get auth() {
      return deps.auth;
    },
    reloadAuth: async (settings, oidcSettings) => {
      const auth = await Auth.open(settings ?? {}, users, config.clock, deps.auth);
      const oidc = openOidcSignIn(oidcSettings, auth);
      deps.auth = auth;
      deps.oidc = oidc;
    },
    // Admission stops first and the active runs get their grace period, the API answering
    // meanwhile; then requests stop, then the runs left are stopped (their steps get their signal).
    close: () => (closed ??= (async () => {
      // No scheduled run is queued once the server is stopping: the ticks from here are missed ones.
      await handle.cron.close();
      await handle.engine.drain(config.shutdownGraceMs ?? 0);
      await server.close();
      closeOps();
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

export function homePaths(home: string) {
  return { dagsDir: join(home, 'dags'), dataDir: join(home, 'data'), logDir: join(home, 'logs') };
}

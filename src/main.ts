// The composition root: the one place that wires the ports to their implementations.
import { readFile, stat } from 'node:fs/promises';
import { logRuns, log, setLogLevel } from './logging/index.ts';
import { EventHub, RemoteNodes, UiFiles, loadTls, startServer, type ApiDeps, type RunningServer, type StoredDetailsAnswer } from './http/index.ts';
import { ResourceHistory, TroupeMetrics, engineSources } from './ops/index.ts';
import { LmdbIdempotencyStore, LmdbUserStore } from './store/index.ts';
import { Auth, openOidcSignIn, type AuthSettings, type OidcSettings } from './auth/index.ts';
import { completeAuth, completeSettings, homePaths, type QueueConfig, type TlsConfig } from './config/index.ts';
import { openEngine, openHome, type EngineHandle, type TroupeConfig } from './open-engine.ts';
import { JqRunner, TaskPool } from './executors/index.ts';
import { RemoteRuns } from './distributed/index.ts';
import type { EngineParts } from './engine/index.ts';
import { calledDagFiles } from './catalog/index.ts';
import { filterSystemEnv } from './definition/index.ts';
import type { StoredDetailsTask } from './run-details-worker.ts';

/** The run-details thread's entry file. */
const runDetailsWorkerFile = new URL(import.meta.url.endsWith('.ts') ? './run-details-worker.ts' : './run-details-worker.js', import.meta.url);

export type { QueueConfig, TlsConfig };
export { homePaths, openEngine, type EngineHandle, type TroupeConfig };

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

/** The whole service: engine, scheduler and API server in this process (`troupe start-all`). */
export async function startTroupe(given: TroupeConfig): Promise<Troupe> {
  // Before the home is opened: settings that cannot be used (a remote node, a port) stop the start and leave nothing behind.
  const config = completeSettings(given);
  if (config.logLevel) setLogLevel(config.logLevel);
  const tls = config.tls ? await loadTls(config.tls) : undefined;
  const remoteNodes = new RemoteNodes(config.remoteNodes, { timeoutMs: config.remoteNodeTimeoutMs });
  // Distributed dispatch: runs with a workerSelector go to workers through Redis.
  let remote: RemoteRuns | undefined;
  const redisUrl = config.redisUrl;
  const parts: EngineParts = redisUrl === undefined ? {} : {
    remoteRuns: (ports) => (remote = new RemoteRuns({
      redisUrl, roots: { logs: config.logDir, dags: config.dagsDir }, closeRunLog: (path) => handle.logs.closeRunLog(path), lostAfterMs: config.workerLostMs,
      calledDags: (specText, variables) => calledDagFiles(handle.catalog, specText, variables), systemEnv: filterSystemEnv(process.env),
      storedRun: (name, dagRunId) => handle.runs.get(name, dagRunId),
    }, ports)),
  };
  const { handle, lock } = await openHome(config, { parts });
  const version = await readVersion();
  const startedAtMs = Date.now();
  const eventHub = new EventHub(handle.runs.events, { heartbeatMs: config.eventHeartbeatMs, backlogBytes: config.eventBacklogBytes });
  const metrics = new TroupeMetrics(engineSources({ ...handle, version, buildDate: await buildDate(), startedAtMs, eventStreams: () => eventHub.counts, watchEventDelay: (observe) => { eventHub.observeDelay = observe; },
    ...(remote ? { workers: () => remote?.listed() ?? [] } : {}) }));
  const resources = new ResourceHistory({ dir: config.dataDir, clock: config.resourceClock, timers: config.resourceClock });
  resources.start();
  const stopRunLines = logRuns((listener) => handle.engine.subscribe(listener));
  const closeOps = () => {
    stopRunLines();
    resources.close();
    metrics.close();
    void remoteNodes.close();
  };
  // Large runs' details read from the store are decoded and encoded on a thread of their own
  // (http/stored-details.ts), which starts with the first such read and leaves after a minute idle.
  const detailsPool = new TaskPool<StoredDetailsTask, StoredDetailsAnswer>({ filename: runDetailsWorkerFile, maxThreads: 1 });
  // jq for the OIDC roleAttributePath, on a thread of its own started with the first sign-in that needs it.
  const jq = new JqRunner();
  const readStoredDetails = (name: string, dagRunId: string, keys: readonly string[]) => detailsPool.run({ dataDir: config.dataDir, name, dagRunId, keys });
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
    deps = { engine: handle.engine, catalog: handle.catalog, runs: handle.runs, readStoredDetails, dags: handle.dags, logs: handle.logs, cron: handle.cron, retention: handle.retention, version, startedAtMs,
      clock: config.clock, idempotency, metrics, resources, remoteNodes, corsOrigins: config.corsOrigins, auth, oidc: await openOidcSignIn(config.oidc, auth, { jq }), eventHub, servesTls: tls !== undefined, ...(ui ? { ui } : {}),
      ...(remote ? { workers: () => remote!.currentWorkers() } : {}) };
    server = await startServer(deps, { host: config.host, port: config.port, carrier: config.carrier, headersTimeoutMs: config.headersTimeoutMs, tls });
  } catch (error) {
    closeOps();
    await detailsPool.close();
    await jq.close();
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
      const oidc = await openOidcSignIn(oidcSettings, auth, { jq });
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
      await detailsPool.close();
      await jq.close();
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

// What the service runs with: every setting, its default, and the checks a value must pass. The
// rest of the service reads a completed Settings and applies no default of its own.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AppError, checkRedisUrl, parseRemoteNodes, queueNameProblem, systemClock, systemTimers, type Clock, type OtelSpec, type RemoteNode, type Timers } from '../core/index.ts';
import { isTimeZone } from '../definition/index.ts';
import { LOG_FORMATS, LOG_LEVELS, isLogFormat, isLogLevel, type LogFormat, type LogLevel } from '../logging/log-settings.ts';
import { AUTH_MODES, type AuthInForce, type AuthSettings, type OidcSettings } from '../auth/auth-settings.ts';

export interface QueueConfig {
  name: string;
  maxConcurrency: number;
}

/** PEM files of the HTTPS certificate and its key (paths as given). */
export interface TlsConfig {
  certFile: string;
  keyFile: string;
}

export type CarrierChoice = 'auto' | 'uws' | 'node';

export interface Settings {
  /** Address the API listens on. Default 127.0.0.1. */
  host: string;
  /** Port of the API; 0 picks a free one. Default 8080. */
  port: number;
  /** Holds dags/, data/, logs/ and config.yaml. Default ~/.troupe. */
  home: string;
  /** DAG files. Default HOME/dags. */
  dagsDir: string;
  /** The LMDB environment, the step registry and the cron state. Default HOME/data. */
  dataDir: string;
  /** Run and step logs. Default HOME/logs. */
  logDir: string;
  /** The HTTP server: uWebSockets.js, node:http, or auto (uWS, node:http when it cannot load). Default auto. */
  carrier: CarrierChoice;
  /** node:http carrier: how long a client may take to send a request's headers before 408. Default 60 s. */
  headersTimeoutMs: number;
  /** Worker threads of the step pool; steps per thread are not limited by it. Default 2. */
  maxThreads: number;
  /** child_process starts steps without the posix_spawn addon; auto uses the addon when it loads (and TROUPE_SPAWN allows). Default auto. */
  spawnMode: 'auto' | 'child_process';
  /**
   * On close, how long active runs may go on to finish on their own (no new run is admitted
   * meanwhile, the API still answers) before the rest are stopped and recorded aborted. Default 0.
   */
  shutdownGraceMs: number;
  /** Write an example DAG when the home is new (the service does; embedders need not). Default false. */
  writeExample: boolean;
  /** What "now" is: run stamps, DAGs' next runs, retention, sessions. Default the system clock (tests move their own). */
  clock: Clock;
  /** What the cron scheduler waits on (the next tick, restartWaitSec). Default Node's timers. */
  cronTimers: Timers;
  /** The zone of schedule expressions without CRON_TZ=. Unset: the server's own (TZ). */
  timeZone?: string;
  /** Custom queues (config.yaml queues.config); every other queue is a DAG's own. Default none. */
  queues: QueueConfig[];
  /** How long a dispatched queued run may take to become active before it fails. Default 10 s. */
  queuedStartDeadlineMs: number;
  /** What the resource history's 5 s samples are stamped with and wait on. Default the system's clock and timers. */
  resourceClock: Clock & Timers;
  /** The server log's level (debug adds a line per request). Unset: the log keeps its level, info unless an embedder set another. */
  logLevel?: LogLevel;
  /** The server log's lines: JSON, text, or auto (text when the log goes to a terminal). Default auto. */
  logFormat: LogFormat;
  /** Nodes a request's remoteNode may name (Dagu's keys). Default none. */
  remoteNodes: RemoteNode[];
  /** The longest a request forwarded to a remote node may take. Default 30 s. */
  remoteNodeTimeoutMs: number;
  /** Origins whose browsers may call the API (* for any). Default none: CORS is off. */
  corsOrigins: string[];
  /**
   * The troupe command's own engine (a verb run with no server on the home): it runs what the verb
   * starts and nothing else: no schedules, no retention sweep, queued runs stay queued, and runs
   * a crashed process left active stay for the next server or scheduler to recover. Default false.
   */
  commandOnly: boolean;
  /**
   * Authentication and roles (docs/auth.md), as configured. Default mode none, no credentials.
   * What the keys left out mean (sessions of 24 h, /health public, every permission on) is the
   * auth module's to say: docs/auth.md.
   */
  auth: AuthInForce;
  /** OIDC login, in auth modes oidc and builtin. Unset: no OIDC. */
  oidc?: OidcSettings;
  /** Serve HTTPS with this certificate and key; checked before the home is opened. Unset: HTTP. */
  tls?: TlsConfig;
  /** How long the event log keeps an event. Default 24 h. */
  eventRetentionMs: number;
  /** The most events the log keeps (the oldest go first); 0: no limit. Default 0. */
  eventMaxCount: number;
  /** How often an idle event stream gets a comment line, so that proxies keep it open. Default 15 s. */
  eventHeartbeatMs: number;
  /** How much an event stream's client may fall behind before it is disconnected. Default 4 MiB. */
  eventBacklogBytes: number;
  /** Whether the dashboard is served at `/`. Default true. */
  ui: boolean;
  /**
   * Distributed dispatch: the Redis (redis:// or rediss://) through which runs of DAGs with a
   * workerSelector are handed to `troupe worker` processes. It may hold a password: show it only
   * through maskedRedisUrl. Unset: every run runs on this server.
   */
  redisUrl?: string;
  /**
   * Distributed dispatch: how long a worker may go without a heartbeat before the runs it holds are
   * settled as a crash settles them (resumed elsewhere by their retryPolicy, else failed). Default 60 s.
   */
  workerLostMs: number;
  /** Tracing of DAGs without an `otel` of their own (config.yaml `otel`). Unset: only DAGs with their own are traced. */
  otel?: OtelSpec;
}

/** What a caller may give: any setting, the auth settings without their mode too. */
export type SettingsInput = Partial<Omit<Settings, 'auth'>> & { auth?: AuthSettings };

/** Where the home is when none is given: ~/.troupe. */
export function defaultHome(): string {
  return join(homedir(), '.troupe');
}

/** The folders a home holds unless they are given one by one. */
export function homePaths(home: string): Pick<Settings, 'dagsDir' | 'dataDir' | 'logDir'> {
  return { dagsDir: join(home, 'dags'), dataDir: join(home, 'data'), logDir: join(home, 'logs') };
}

/** The settings that may stay unset (each says what unset means), and those that follow `home`. */
type Unset = 'timeZone' | 'logLevel' | 'oidc' | 'tls' | 'redisUrl' | 'otel';
type FromHome = 'home' | 'dagsDir' | 'dataDir' | 'logDir';

/** The default of every other setting: the type makes a new setting name its default here. */
export const DEFAULTS: Readonly<Omit<Settings, Unset | FromHome>> = Object.freeze<Omit<Settings, Unset | FromHome>>({
  host: '127.0.0.1',
  port: 8080,
  carrier: 'auto',
  headersTimeoutMs: 60_000,
  maxThreads: 2,
  spawnMode: 'auto',
  shutdownGraceMs: 0,
  writeExample: false,
  clock: systemClock,
  cronTimers: systemTimers,
  queues: [],
  queuedStartDeadlineMs: 10_000,
  resourceClock: { ...systemClock, ...systemTimers },
  logFormat: 'auto',
  remoteNodes: [],
  remoteNodeTimeoutMs: 30_000,
  corsOrigins: [],
  commandOnly: false,
  auth: Object.freeze({ mode: 'none' }),
  eventRetentionMs: 24 * 3600_000,
  eventMaxCount: 0,
  eventHeartbeatMs: 15_000,
  workerLostMs: 60_000,
  eventBacklogBytes: 4 * 1024 * 1024,
  ui: true,
});

/**
 * The text each value was read from (a flag, a variable, config.yaml), so that a problem quotes
 * what the user wrote rather than the number it became.
 */
export type WrittenAs = Partial<Record<keyof Settings, string>>;

/** `input` with every default applied; a value that cannot be used is refused (bad_request) naming it. */
export function completeSettings(input: SettingsInput, written: WrittenAs = {}): Settings {
  const fail = (message: string) => new AppError('bad_request', message);
  const shown = (key: keyof Settings, value: unknown) => written[key] ?? String(value);
  const home = input.home ?? defaultHome();
  const given = definedOnly(input);
  if (given.queues !== undefined && !Array.isArray(given.queues)) throw fail('queues must be a list of {name, maxConcurrency}');
  if (given.corsOrigins !== undefined && !Array.isArray(given.corsOrigins)) throw fail(CORS_PROBLEM);
  // Lists and maps are copied: a caller's later change, or a change to one start's, reaches no other.
  const settings: Settings = {
    ...DEFAULTS, ...homePaths(home), home, ...given,
    queues: [...(given.queues ?? DEFAULTS.queues)], corsOrigins: [...(given.corsOrigins ?? DEFAULTS.corsOrigins)], auth: completeAuth(given.auth),
  };

  if (!Number.isInteger(settings.port) || settings.port < 0 || settings.port > 65535) throw fail(`invalid port "${shown('port', settings.port)}"`);
  for (const key of ['host', 'home', 'dagsDir', 'dataDir', 'logDir'] as const) {
    if (typeof settings[key] !== 'string' || (key !== 'host' && settings[key] === '')) throw fail(`${key} must be ${key === 'host' ? 'an address' : 'a folder path'}`);
  }
  if (!['auto', 'uws', 'node'].includes(settings.carrier)) throw fail(`http must be auto, uws or node, not "${shown('carrier', settings.carrier)}"`);
  for (const key of ['writeExample', 'commandOnly'] as const) {
    if (typeof settings[key] !== 'boolean') throw fail(`${key} must be true or false`);
  }
  if (typeof settings.clock?.now !== 'function') throw fail('clock must have now()');
  for (const key of ['cronTimers', 'resourceClock'] as const) {
    if (typeof settings[key]?.setTimeout !== 'function' || typeof settings[key]?.clearTimeout !== 'function') throw fail(`${key} must have setTimeout and clearTimeout`);
  }
  if (typeof settings.resourceClock.now !== 'function') throw fail('resourceClock must have now()');
  if (settings.timeZone !== undefined && !isTimeZone(settings.timeZone)) throw fail(`timeZone "${settings.timeZone}" is not a time zone this system knows`);
  if (!Number.isInteger(settings.maxThreads) || settings.maxThreads < 1) throw fail('workers must be a positive integer');
  if (settings.spawnMode !== 'auto' && settings.spawnMode !== 'child_process') throw fail(`spawnMode must be auto or child_process, not "${settings.spawnMode}"`);
  if (!Number.isFinite(settings.shutdownGraceMs) || settings.shutdownGraceMs < 0) {
    throw fail(`shutdown grace must be a number of seconds, 0 or more, not "${shown('shutdownGraceMs', settings.shutdownGraceMs / 1000)}"`);
  }
  for (const key of ['headersTimeoutMs', 'queuedStartDeadlineMs', 'remoteNodeTimeoutMs'] as const) {
    if (!Number.isFinite(settings[key]) || settings[key] <= 0) throw fail(`${key} must be a number of milliseconds above 0, not ${settings[key]}`);
  }
  if (!Number.isFinite(settings.eventRetentionMs) || settings.eventRetentionMs <= 0) throw fail(`events.retentionHours must be a number of hours above 0, not "${shown('eventRetentionMs', settings.eventRetentionMs / 3600_000)}"`);
  if (!Number.isFinite(settings.workerLostMs) || settings.workerLostMs <= 0) throw fail(`distributed.workerLostSec must be a number of seconds above 0, not "${shown('workerLostMs', settings.workerLostMs / 1000)}"`);
  if (!Number.isFinite(settings.eventHeartbeatMs) || settings.eventHeartbeatMs <= 0) throw fail(`events.heartbeatSec must be a number of seconds above 0, not "${shown('eventHeartbeatMs', settings.eventHeartbeatMs / 1000)}"`);
  for (const key of ['eventMaxCount', 'eventBacklogBytes'] as const) {
    if (!Number.isSafeInteger(settings[key]) || settings[key] < (key === 'eventMaxCount' ? 0 : 1024)) {
      throw fail(`${key === 'eventMaxCount' ? 'events.maxCount must be an integer, 0 (no limit) or more' : 'events.backlogBytes must be an integer of at least 1024'}, not "${shown(key, settings[key])}"`);
    }
  }
  if (settings.logLevel !== undefined && !isLogLevel(settings.logLevel)) {
    throw fail(`log level must be one of ${LOG_LEVELS.join(', ')}, not "${shown('logLevel', settings.logLevel)}"`);
  }
  if (typeof settings.ui !== 'boolean') throw fail(`ui must be true or false, not "${shown('ui', settings.ui)}"`);
  if (typeof settings.logFormat !== 'string' || !isLogFormat(settings.logFormat)) {
    throw fail(`log format must be one of ${LOG_FORMATS.join(', ')}, not "${shown('logFormat', settings.logFormat)}"`);
  }
  if (!(AUTH_MODES as readonly string[]).includes(settings.auth.mode)) throw fail(`auth.mode must be one of ${AUTH_MODES.join(', ')}, not "${settings.auth.mode}"`);
  const queueProblem = queueListProblem(settings.queues);
  if (queueProblem) throw fail(`queues: ${queueProblem}`);
  // A node configured wrong stops the start before the home is opened, leaving nothing behind.
  settings.remoteNodes = parseRemoteNodes(settings.remoteNodes);
  if (settings.corsOrigins.some((origin) => typeof origin !== 'string' || origin === '')) throw fail(CORS_PROBLEM);
  if (settings.tls !== undefined && (typeof settings.tls.certFile !== 'string' || typeof settings.tls.keyFile !== 'string' || !settings.tls.certFile || !settings.tls.keyFile)) {
    throw fail('HTTPS needs both tls.certFile (TROUPE_CERT_FILE) and tls.keyFile (TROUPE_KEY_FILE)');
  }
  const redisProblem = settings.redisUrl === undefined ? undefined : redisUrlProblem(settings.redisUrl);
  if (redisProblem) throw fail(redisProblem);
  return settings;
}

/** Auth settings with their defaults: at start, and for the settings a reload (SIGHUP) brings. */
export function completeAuth(given: AuthSettings = {}): AuthInForce {
  return { ...given, mode: given.mode ?? DEFAULTS.auth.mode };
}

export const CORS_PROBLEM = 'cors: allowOrigins must be a list of origins (such as https://app.example.com, or "*")';

/** The first problem of a list of custom queues (a name, a limit, a queue given twice), or undefined. */
export function queueListProblem(queues: readonly QueueConfig[]): string | undefined {
  for (const [index, { name, maxConcurrency }] of queues.entries()) {
    const problem = queueNameProblem(name);
    if (problem) return `config[${index}]: ${problem}`;
    if (typeof maxConcurrency !== 'number' || !Number.isInteger(maxConcurrency) || maxConcurrency < 1) return `config[${index}]: maxConcurrency must be an integer of at least 1`;
  }
  const seen = new Set<string>();
  for (const { name } of queues) {
    if (seen.has(name)) return `queue ${name} is configured twice`;
    seen.add(name);
  }
  return undefined;
}

/** What is wrong with a Redis URL, naming where it is set and never quoting it (it may hold a password). */
function redisUrlProblem(url: unknown): string | undefined {
  const where = '(distributed.redis, TROUPE_REDIS_URL or --redis)';
  if (typeof url !== 'string' || url === '') return `the Redis URL ${where} must be a redis:// or rediss:// URL`;
  try {
    checkRedisUrl(url);
    return undefined;
  } catch (error) {
    return `${(error as Error).message} ${where}`;
  }
}

// An embedder's `{ port: undefined }` means "not given", as a key left out does.
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

// The service's configuration from its sources: config.yaml < TROUPE_* variables < command-line
// flags, each setting taken from the first that gives it; completeSettings applies the defaults.
import { join, resolve } from 'node:path';
import { readOidcSettings } from '../auth/auth-settings.ts';
import type { LogFormat, LogLevel } from '../logging/log-settings.ts';
import { resolveAuth } from './auth-config.ts';
import { readConfigFile, type Layer } from './config-file.ts';
import { completeSettings, defaultHome, type CarrierChoice, type Settings, type SettingsInput, type WrittenAs } from './settings.ts';
import { resolveTls } from './tls-config.ts';

export interface ResolvedConfig extends Settings {
  /** The config file named by --config or TROUPE_CONFIG; unset when HOME/config.yaml was read (or missing). */
  configFile?: string;
  /** Keys of config.yaml that troupe does not use: started all the same, and told (docs/configuration.md). */
  warnings: string[];
}

/** The command-line flags that override the configuration, as the parser hands them (camelCase). */
export interface Flags {
  host?: string;
  port?: string;
  home?: string;
  dags?: string;
  config?: string;
  http?: string;
  shutdownGrace?: string;
  logLevel?: string;
  logFormat?: string;
  /** False with --no-ui. */
  ui?: boolean;
  redis?: string;
}

export async function resolveConfig(flags: Flags, env: Record<string, string | undefined>): Promise<ResolvedConfig> {
  const fromEnv: Layer = {
    host: env.TROUPE_HOST, port: env.TROUPE_PORT, home: env.TROUPE_HOME, dags: env.TROUPE_DAGS,
    data: env.TROUPE_DATA, logs: env.TROUPE_LOGS, http: env.TROUPE_HTTP, workers: env.TROUPE_WORKERS, grace: env.TROUPE_SHUTDOWN_GRACE_SEC,
    logLevel: env.TROUPE_LOG_LEVEL, logFormat: env.TROUPE_LOG_FORMAT,
    eventRetentionHours: env.TROUPE_EVENT_RETENTION_HOURS, eventMaxCount: env.TROUPE_EVENT_MAX_COUNT, ui: env.TROUPE_UI, redis: env.TROUPE_REDIS_URL, workerLostSec: env.TROUPE_WORKER_LOST_SEC,
  };
  const corsFromEnv = defined(env.TROUPE_CORS_ORIGINS)?.split(',').map((origin) => origin.trim()).filter(Boolean);
  const fromFlags: Layer = { host: flags.host, port: flags.port, home: flags.home, dags: flags.dags, http: flags.http, grace: flags.shutdownGrace, logLevel: flags.logLevel, logFormat: flags.logFormat,
    ui: flags.ui === false ? 'false' : undefined, redis: flags.redis };
  // The home is known before the file is read, since it holds the file: config.yaml's `home` cannot move it.
  const home = resolve(fromFlags.home ?? fromEnv.home ?? defaultHome());
  const configFile = flags.config ?? env.TROUPE_CONFIG;
  const filePath = configFile ? resolve(configFile) : join(home, 'config.yaml');
  const file = await readConfigFile(filePath, configFile !== undefined);
  const { settings: auth, ignored: ignoredAuth } = resolveAuth(file.authFile, env, filePath);
  const ignored = [...file.ignored, ...ignoredAuth];
  const authSection = file.authFile.auth as Record<string, unknown> | null | undefined;
  const oidc = readOidcSettings(authSection?.oidc, env);
  const modeGiven = defined(env.TROUPE_AUTH_MODE) !== undefined || authSection?.mode != null;
  // As Dagu: OIDC settings without an auth mode select mode oidc.
  if (oidc && !modeGiven) auth.mode = 'oidc';

  const pick = (key: keyof Layer) => defined(fromFlags[key]) ?? defined(fromEnv[key]) ?? defined(file.layer[key]);
  const number = (text: string | undefined) => (text === undefined ? undefined : Number(text));
  // Folders given relative are read from the home.
  const folder = (text: string | undefined) => (text === undefined ? undefined : resolve(home, text));
  const grace = number(pick('grace'));
  const scaled = (key: keyof Layer, by: number) => { const value = number(pick(key)); return value === undefined ? undefined : value * by; };
  const input: SettingsInput = {
    host: pick('host'),
    port: number(pick('port')),
    home,
    dagsDir: folder(pick('dags')),
    dataDir: folder(pick('data')),
    logDir: folder(pick('logs')),
    carrier: pick('http') as CarrierChoice | undefined,
    maxThreads: number(pick('workers')),
    shutdownGraceMs: grace === undefined ? undefined : grace * 1000,
    logLevel: pick('logLevel') as LogLevel | undefined,
    logFormat: pick('logFormat') as LogFormat | undefined,
    queues: file.queues,
    otel: file.otel,
    remoteNodes: file.remoteNodes,
    corsOrigins: corsFromEnv ?? file.corsOrigins,
    auth,
    oidc,
    tls: resolveTls(file.tls, env),
    eventRetentionMs: scaled('eventRetentionHours', 3600_000),
    eventMaxCount: number(pick('eventMaxCount')),
    eventHeartbeatMs: scaled('eventHeartbeatSec', 1000),
    eventBacklogBytes: number(pick('eventBacklogBytes')),
    ui: onOff(pick('ui')),
    redisUrl: pick('redis'),
    workerLostMs: scaled('workerLostSec', 1000),
  };
  // The Redis URL has no written text: it may hold a password, and no problem quotes it.
  const written: WrittenAs = { ui: pick('ui'), port: pick('port'), carrier: pick('http'), shutdownGraceMs: pick('grace'), logLevel: pick('logLevel'), logFormat: pick('logFormat'),
    eventRetentionMs: pick('eventRetentionHours'), eventMaxCount: pick('eventMaxCount'), eventHeartbeatMs: pick('eventHeartbeatSec'), eventBacklogBytes: pick('eventBacklogBytes'), workerLostMs: pick('workerLostSec') };
  return {
    ...completeSettings(input, written),
    configFile,
    warnings: ignored.length === 0 ? [] : [`config file: ignoring keys troupe does not use: ${ignored.join(', ')}`],
  };
}

/** true and false as written (any case); anything else is kept, and refused by completeSettings quoting it. */
function onOff(text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  const word = text.toLowerCase();
  return word === 'true' ? true : word === 'false' ? false : text as never;
}

function defined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

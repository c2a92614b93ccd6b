// Where each setting comes from and its default as a user reads it: the table of
// docs/configuration.md is this one (a test compares them), so the docs follow the code.
import type { Settings } from './settings.ts';

export interface SettingSource {
  /** The default as docs/configuration.md states it (settings.ts holds the value). */
  default: string;
  yaml?: string;
  env?: string;
  flag?: string;
}

/** Every setting: the type makes a new one name its sources here. */
export const SETTING_SOURCES: Record<keyof Settings, SettingSource> = {
  host: { default: '`127.0.0.1`', yaml: 'host', env: 'TROUPE_HOST', flag: '--host' },
  port: { default: '`8080`', yaml: 'port', env: 'TROUPE_PORT', flag: '--port' },
  home: { default: '`~/.troupe`', env: 'TROUPE_HOME', flag: '--home' },
  dagsDir: { default: '`HOME/dags`', yaml: 'dags', env: 'TROUPE_DAGS', flag: '--dags' },
  dataDir: { default: '`HOME/data`', yaml: 'dataDir', env: 'TROUPE_DATA' },
  logDir: { default: '`HOME/logs`', yaml: 'logDir', env: 'TROUPE_LOGS' },
  carrier: { default: '`auto`', yaml: 'http', env: 'TROUPE_HTTP', flag: '--http' },
  headersTimeoutMs: { default: '60 s' },
  maxThreads: { default: '`2`', yaml: 'workers', env: 'TROUPE_WORKERS' },
  spawnMode: { default: '`auto`', env: 'TROUPE_SPAWN' },
  shutdownGraceMs: { default: '0 s', yaml: 'shutdownGraceSec', env: 'TROUPE_SHUTDOWN_GRACE_SEC', flag: '--shutdown-grace' },
  writeExample: { default: '`false` (the service: `true`)' },
  clock: { default: 'the system clock' },
  cronTimers: { default: "Node's timers" },
  timeZone: { default: "the server's (`TZ`)", env: 'TZ' },
  queues: { default: 'none', yaml: 'queues' },
  queuedStartDeadlineMs: { default: '10 s' },
  resourceClock: { default: "the system clock and Node's timers" },
  logLevel: { default: '`info`', yaml: 'logLevel', env: 'TROUPE_LOG_LEVEL', flag: '--log-level' },
  logFormat: { default: '`auto`', yaml: 'logFormat', env: 'TROUPE_LOG_FORMAT', flag: '--log-format' },
  remoteNodes: { default: 'none', yaml: 'remoteNodes' },
  remoteNodeTimeoutMs: { default: '30 s' },
  corsOrigins: { default: 'none', yaml: 'cors.allowOrigins', env: 'TROUPE_CORS_ORIGINS' },
  commandOnly: { default: '`false` (the troupe command\'s verbs: `true`)' },
  auth: { default: 'mode `none` (docs/auth.md)', yaml: 'auth, permissions', env: 'TROUPE_AUTH_*, TROUPE_PERMISSIONS_*' },
  oidc: { default: 'off', yaml: 'auth.oidc', env: 'TROUPE_AUTH_OIDC_*' },
  tls: { default: 'off (HTTP)', yaml: 'tls.certFile, tls.keyFile', env: 'TROUPE_CERT_FILE, TROUPE_KEY_FILE' },
  eventRetentionMs: { default: '24 h', yaml: 'events.retentionHours', env: 'TROUPE_EVENT_RETENTION_HOURS' },
  eventMaxCount: { default: '`0` (no limit)', yaml: 'events.maxCount', env: 'TROUPE_EVENT_MAX_COUNT' },
  eventHeartbeatMs: { default: '15 s', yaml: 'events.heartbeatSec' },
  eventBacklogBytes: { default: '4 MiB', yaml: 'events.backlogBytes' },
  ui: { default: '`true`', yaml: 'ui', env: 'TROUPE_UI', flag: '--no-ui' },
  redisUrl: { default: 'none (every run runs on the server)', yaml: 'distributed.redis', env: 'TROUPE_REDIS_URL', flag: '--redis' },
  workerLostMs: { default: '60 s', yaml: 'distributed.workerLostSec', env: 'TROUPE_WORKER_LOST_SEC' },
  otel: { default: 'none (a DAG is traced by its own `otel`)', yaml: 'otel' },
};

/** The table as docs/configuration.md holds it. */
export function settingsTable(): string {
  const code = (names: string | undefined) => (names ? names.split(', ').map((name) => `\`${name}\``).join(', ') : '');
  const rows = Object.entries(SETTING_SOURCES).map(([key, source]) =>
    `| \`${key}\` | ${source.default} | ${code(source.yaml)} | ${code(source.env)} | ${code(source.flag)} |`);
  return ['| Setting | Default | config.yaml | Variable | Flag |', '|---|---|---|---|---|', ...rows].join('\n');
}

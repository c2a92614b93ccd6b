// Configuration: defaults < config.yaml < TROUPE_* variables < command-line flags.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AppError, parseRemoteNodes, queueNameProblem, type RemoteNode } from '../core/index.ts';
import { parseYamlMap } from '../definition/index.ts';
import type { QueueConfig, TroupeConfig } from '../main.ts';
import { LOG_LEVELS, isLogLevel } from '../logging/index.ts';
import { resolveAuth, type AuthFile } from './auth-config.ts';
import { readOidcSettings } from '../auth/index.ts';
import { resolveTls, tlsFileKeys, type TlsKeys } from './tls-config.ts';

export interface ResolvedConfig extends TroupeConfig {
  carrier: 'auto' | 'uws' | 'node';
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
}

type Layer = Partial<Record<'host' | 'port' | 'home' | 'dags' | 'data' | 'logs' | 'http' | 'workers' | 'grace' | 'logLevel', string>>;

const fileKeys: Record<string, keyof Layer> = {
  host: 'host', port: 'port', home: 'home', dags: 'dags', dagsDir: 'dags', dataDir: 'data', logDir: 'logs', logsDir: 'logs', http: 'http', workers: 'workers', shutdownGraceSec: 'grace',
  logLevel: 'logLevel',
};

export async function resolveConfig(flags: Flags, env: Record<string, string | undefined>): Promise<ResolvedConfig> {
  const fromEnv: Layer = {
    host: env.TROUPE_HOST, port: env.TROUPE_PORT, home: env.TROUPE_HOME, dags: env.TROUPE_DAGS,
    data: env.TROUPE_DATA, logs: env.TROUPE_LOGS, http: env.TROUPE_HTTP, workers: env.TROUPE_WORKERS, grace: env.TROUPE_SHUTDOWN_GRACE_SEC,
    logLevel: env.TROUPE_LOG_LEVEL,
  };
  const corsFromEnv = defined(env.TROUPE_CORS_ORIGINS)?.split(',').map((origin) => origin.trim()).filter(Boolean);
  const fromFlags: Layer = { host: flags.host, port: flags.port, home: flags.home, dags: flags.dags, http: flags.http, grace: flags.shutdownGrace, logLevel: flags.logLevel };
  const home = resolve(fromFlags.home ?? fromEnv.home ?? join(homedir(), '.troupe'));
  const configFile = flags.config ?? env.TROUPE_CONFIG;
  const filePath = configFile ? resolve(configFile) : join(home, 'config.yaml');
  const { layer: fromFile, queues, remoteNodes, corsOrigins, tls, ignored: ignoredKeys, authFile } = await readConfigFile(filePath, configFile !== undefined);
  const { settings: auth, ignored: ignoredAuth } = resolveAuth(authFile, env, filePath);
  const ignored = [...ignoredKeys, ...ignoredAuth];
  const oidc = readOidcSettings((authFile.auth as Record<string, unknown> | null | undefined)?.oidc, env);
  const modeGiven = defined(env.TROUPE_AUTH_MODE) !== undefined || (authFile.auth as Record<string, unknown> | null | undefined)?.mode != null;
  // As Dagu: OIDC settings without an auth mode select mode oidc.
  if (oidc && !modeGiven) auth.mode = 'oidc';
  const pick = (key: keyof Layer) => defined(fromFlags[key]) ?? defined(fromEnv[key]) ?? defined(fromFile[key]);
  const port = Number(pick('port') ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new AppError('bad_request', `invalid port "${pick('port')}"`);
  const carrier = pick('http') ?? 'auto';
  if (carrier !== 'auto' && carrier !== 'uws' && carrier !== 'node') throw new AppError('bad_request', `http must be auto, uws or node, not "${carrier}"`);
  const workers = pick('workers');
  const maxThreads = workers === undefined ? undefined : Number(workers);
  if (maxThreads !== undefined && (!Number.isInteger(maxThreads) || maxThreads < 1)) throw new AppError('bad_request', `workers must be a positive integer`);
  const grace = Number(pick('grace') ?? 0);
  if (!Number.isFinite(grace) || grace < 0) throw new AppError('bad_request', `shutdown grace must be a number of seconds, 0 or more, not "${pick('grace')}"`);
  const logLevel = pick('logLevel') ?? 'info';
  if (!isLogLevel(logLevel)) throw new AppError('bad_request', `log level must be one of ${LOG_LEVELS.join(', ')}, not "${logLevel}"`);
  return {
    host: pick('host') ?? '127.0.0.1',
    logLevel,
    port,
    home,
    dagsDir: resolve(home, pick('dags') ?? 'dags'),
    dataDir: resolve(home, pick('data') ?? 'data'),
    logDir: resolve(home, pick('logs') ?? 'logs'),
    carrier,
    maxThreads,
    shutdownGraceMs: grace * 1000,
    queues,
    remoteNodes,
    corsOrigins: corsFromEnv ?? corsOrigins,
    auth,
    ...(oidc ? { oidc } : {}),
    tls: resolveTls(tls, env),
    configFile,
    warnings: ignored.length === 0 ? [] : [`config file: ignoring keys troupe does not use: ${ignored.join(', ')}`],
  };
}

function defined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

interface FileSettings {
  layer: Layer;
  queues: QueueConfig[];
  remoteNodes: RemoteNode[];
  corsOrigins: string[];
  tls: TlsKeys;
  /** Keys read and not used. */
  ignored: string[];
  /** `auth` and `permissions` as written, for auth-config.ts. */
  authFile: AuthFile;
}

async function readConfigFile(path: string, required: boolean): Promise<FileSettings> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !required) return { layer: {}, queues: [], remoteNodes: [], corsOrigins: [], tls: {}, ignored: [], authFile: {} };
    throw new AppError('bad_request', `cannot read config file ${path}: ${(error as Error).message}`);
  }
  let map: Record<string, unknown>;
  try {
    map = parseYamlMap(text);
  } catch (error) {
    throw new AppError('bad_request', `config file ${path}: ${(error as Error).message}`);
  }
  const layer: Layer = {};
  let queues: QueueConfig[] = [];
  let remoteNodes: RemoteNode[] = [];
  let corsOrigins: string[] = [];
  let tls: TlsKeys = {};
  const ignored: string[] = [];
  const authFile: AuthFile = {};
  for (const [key, value] of Object.entries(map)) {
    if (key === 'auth' || key === 'permissions') {
      authFile[key] = value;
      continue;
    }
    // Dagu's `paths: {dagsDir, dataDir, logDir}` (or snake_case) name the same folders.
    if (key === 'paths' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, folder] of Object.entries(value as Record<string, unknown>)) {
        const target = PATH_KEYS[inner];
        if (!target) ignored.push(`paths.${inner}`);
        else if (folder !== null && folder !== undefined) layer[target] ??= String(folder);
      }
      continue;
    }
    if (key === 'cors') {
      corsOrigins = corsConfig(value, path);
      continue;
    }
    if (key === 'tls') {
      tls = tlsFileKeys(value, path, ignored);
      continue;
    }
    if (key === 'queues') {
      queues = queueConfig(value, path);
      continue;
    }
    // Dagu's switch for debug logging; logLevel says more and wins when both are set.
    if (key === 'debug') {
      if (value === true) layer.logLevel ??= 'debug';
      continue;
    }
    if (key === 'remoteNodes') {
      try {
        remoteNodes = parseRemoteNodes(value);
      } catch (error) {
        throw new AppError('bad_request', `config file ${path}: ${(error as Error).message}`);
      }
      continue;
    }
    const target = fileKeys[key];
    if (!target) ignored.push(key);
    else if (value !== null && value !== undefined) layer[target] = String(value);
  }
  return { layer, queues, remoteNodes, corsOrigins, tls, ignored, authFile };
}

const PATH_KEYS: Record<string, keyof Layer> = { dagsDir: 'dags', dags_dir: 'dags', dataDir: 'data', data_dir: 'data', logDir: 'logs', log_dir: 'logs' };

/** `cors: {allowOrigins: [origin...]}` (`*` for any); CORS is off without it. */
function corsConfig(value: unknown, path: string): string[] {
  if (value === null || value === undefined) return [];
  const origins = typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>).allowOrigins ?? (value as Record<string, unknown>).allowedOrigins : undefined;
  if (!Array.isArray(origins) || origins.some((origin) => typeof origin !== 'string' || origin === '')) {
    throw new AppError('bad_request', `config file ${path}: cors: allowOrigins must be a list of origins (such as https://app.example.com, or "*")`);
  }
  return origins as string[];
}

/**
 * Dagu's `queues: {enabled, config: [{name, maxConcurrency}]}` (docs/configuration.md). With
 * `enabled: false` no custom queue is configured: every run waits in its DAG's own queue.
 */
function queueConfig(value: unknown, path: string): QueueConfig[] {
  const fail = (problem: string) => new AppError('bad_request', `config file ${path}: queues: ${problem}`);
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object' || Array.isArray(value)) throw fail('must be a map with enabled and config');
  const { enabled, config, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw fail(`unknown key "${unknown[0]}"`);
  if (enabled !== undefined && typeof enabled !== 'boolean') throw fail('enabled must be true or false');
  if (config !== undefined && config !== null && !Array.isArray(config)) throw fail('config must be a list of {name, maxConcurrency}');
  const queues = ((config ?? []) as unknown[]).map((entry, index) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw fail(`config[${index}] must be a map with name and maxConcurrency`);
    const { name, maxConcurrency, maxActiveRuns, ...others } = entry as Record<string, unknown>;
    const extra = Object.keys(others);
    if (extra.length > 0) throw fail(`config[${index}]: unknown key "${extra[0]}"`);
    const problem = queueNameProblem(name);
    if (problem) throw fail(`config[${index}]: ${problem}`);
    // maxActiveRuns: the key's name before Dagu 1.22.
    const limit = maxConcurrency ?? maxActiveRuns ?? 1;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw fail(`config[${index}]: maxConcurrency must be an integer of at least 1`);
    return { name: name as string, maxConcurrency: limit };
  });
  const seen = new Set<string>();
  for (const { name } of queues) {
    if (seen.has(name)) throw fail(`queue ${name} is configured twice`);
    seen.add(name);
  }
  return enabled === false ? [] : queues;
}

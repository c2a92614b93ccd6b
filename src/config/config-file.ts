// config.yaml, read into the values it names (text for the scalar settings, checked lists for the
// rest). Applies no default: a key left out is left out (resolve.ts layers, settings.ts completes).
import { readFile } from 'node:fs/promises';
import { AppError, parseRemoteNodes, type OtelSpec, type RemoteNode } from '../core/index.ts';
import { goDurationMs, parseYamlMap } from '../definition/index.ts';
import type { AuthFile } from './auth-config.ts';
import { CORS_PROBLEM, queueListProblem, type QueueConfig } from './settings.ts';
import { tlsFileKeys, type TlsKeys } from './tls-config.ts';

/** The scalar settings as text, from each layer (flags, variables, the file). */
export type Layer = Partial<Record<'host' | 'port' | 'home' | 'dags' | 'data' | 'logs' | 'http' | 'workers' | 'grace' | 'logLevel' | 'logFormat'
  | 'eventRetentionHours' | 'eventMaxCount' | 'eventHeartbeatSec' | 'eventBacklogBytes' | 'ui' | 'redis' | 'workerLostSec', string>>;

/** `events: {retentionHours, maxCount, heartbeatSec, backlogBytes}`: the event log and its streams. */
const EVENT_KEYS: Record<string, keyof Layer> = {
  retentionHours: 'eventRetentionHours', maxCount: 'eventMaxCount', heartbeatSec: 'eventHeartbeatSec', backlogBytes: 'eventBacklogBytes',
};

const FILE_KEYS: Record<string, keyof Layer> = {
  host: 'host', port: 'port', home: 'home', dags: 'dags', dagsDir: 'dags', dataDir: 'data', logDir: 'logs', logsDir: 'logs', http: 'http', workers: 'workers', shutdownGraceSec: 'grace',
  logLevel: 'logLevel', logFormat: 'logFormat', ui: 'ui',
};

const PATH_KEYS: Record<string, keyof Layer> = { dagsDir: 'dags', dags_dir: 'dags', dataDir: 'data', data_dir: 'data', logDir: 'logs', log_dir: 'logs' };

export interface FileSettings {
  layer: Layer;
  queues?: QueueConfig[];
  otel?: OtelSpec;
  remoteNodes?: RemoteNode[];
  corsOrigins?: string[];
  tls: TlsKeys;
  /** Keys read and not used. */
  ignored: string[];
  /** `auth` and `permissions` as written, for auth-config.ts. */
  authFile: AuthFile;
}

/** `required`: the file was named (--config, TROUPE_CONFIG), so a missing one is an error. */
export async function readConfigFile(path: string, required: boolean): Promise<FileSettings> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !required) return { layer: {}, tls: {}, ignored: [], authFile: {} };
    throw new AppError('bad_request', `cannot read config file ${path}: ${(error as Error).message}`);
  }
  let map: Record<string, unknown>;
  try {
    map = parseYamlMap(text);
  } catch (error) {
    throw new AppError('bad_request', `config file ${path}: ${(error as Error).message}`);
  }
  const found: FileSettings = { layer: {}, tls: {}, ignored: [], authFile: {} };
  const { layer, ignored, authFile } = found;
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
    if (key === 'events' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, setting] of Object.entries(value as Record<string, unknown>)) {
        const target = EVENT_KEYS[inner];
        if (!target) ignored.push(`events.${inner}`);
        else if (setting !== null && setting !== undefined) layer[target] = String(setting);
      }
      continue;
    }
    if (key === 'distributed') {
      const { redis, workerLostSec } = distributedConfig(value, path, ignored);
      if (redis !== undefined) layer.redis = redis;
      if (workerLostSec !== undefined) layer.workerLostSec = workerLostSec;
      continue;
    }
    if (key === 'cors') {
      found.corsOrigins = corsConfig(value, path);
      continue;
    }
    if (key === 'tls') {
      found.tls = tlsFileKeys(value, path, ignored);
      continue;
    }
    if (key === 'queues') {
      found.queues = queueConfig(value, path);
      continue;
    }
    if (key === 'otel') {
      found.otel = otelConfig(value, path);
      continue;
    }
    // Dagu's switch for debug logging; logLevel says more and wins when both are set.
    if (key === 'debug') {
      if (value === true) layer.logLevel ??= 'debug';
      continue;
    }
    if (key === 'remoteNodes') {
      try {
        found.remoteNodes = parseRemoteNodes(value);
      } catch (error) {
        throw new AppError('bad_request', `config file ${path}: ${(error as Error).message}`);
      }
      continue;
    }
    const target = FILE_KEYS[key];
    if (!target) ignored.push(key);
    else if (value !== null && value !== undefined) layer[target] = String(value);
  }
  return found;
}

/**
 * `distributed: {redis: URL, workerLostSec: N}`: the Redis of distributed dispatch, and how long a
 * silent worker keeps its runs; other keys of the map are named as unused.
 */
function distributedConfig(value: unknown, path: string, ignored: string[]): { redis?: string; workerLostSec?: string } {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new AppError('bad_request', `config file ${path}: distributed must be a map with redis`);
  let redis: string | undefined;
  let workerLostSec: string | undefined;
  for (const [inner, setting] of Object.entries(value as Record<string, unknown>)) {
    if (inner === 'workerLostSec') {
      if (setting !== null && setting !== undefined) workerLostSec = String(setting);
      continue;
    }
    if (inner !== 'redis') ignored.push(`distributed.${inner}`);
    else if (setting === null || setting === undefined || setting === '') continue;
    // Not quoted: the URL may hold a password.
    else if (typeof setting !== 'string') throw new AppError('bad_request', `config file ${path}: distributed.redis must be a redis:// or rediss:// URL`);
    else redis = setting;
  }
  return { redis, workerLostSec };
}

/** `cors: {allowOrigins: [origin...]}` (`*` for any); CORS is off without it. */
function corsConfig(value: unknown, path: string): string[] {
  if (value === null || value === undefined) return [];
  const origins = typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>).allowOrigins ?? (value as Record<string, unknown>).allowedOrigins : undefined;
  if (!Array.isArray(origins) || origins.some((origin) => typeof origin !== 'string' || origin === '')) {
    throw new AppError('bad_request', `config file ${path}: ${CORS_PROBLEM}`);
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
    // maxActiveRuns: the key's name before Dagu 1.22; a queue written without either runs one at a time, as Dagu's.
    return { name, maxConcurrency: maxConcurrency ?? maxActiveRuns ?? 1 } as QueueConfig;
  });
  const problem = queueListProblem(queues);
  if (problem) throw fail(problem);
  return enabled === false ? [] : queues;
}

/**
 * `otel: {enabled, endpoint, headers, insecure, timeout, resource}`: how runs of DAGs without an
 * `otel` of their own are traced, with the same fields and rules as a DAG's.
 */
function otelConfig(value: unknown, path: string): OtelSpec | undefined {
  if (value === null || value === undefined) return undefined;
  const fail = (problem: string) => new AppError('bad_request', `config file ${path}: otel${problem}`);
  if (typeof value !== 'object' || Array.isArray(value)) throw fail(' must be a map of enabled, endpoint, headers, insecure, timeout, resource');
  const map = value as Record<string, unknown>;
  const unknownKey = Object.keys(map).find((key) => !['enabled', 'endpoint', 'headers', 'insecure', 'timeout', 'resource'].includes(key));
  if (unknownKey !== undefined) throw fail(`.${unknownKey} is not a field of otel (enabled, endpoint, headers, insecure, timeout, resource)`);
  const flag = (key: string) => {
    if (map[key] === undefined || map[key] === null) return false;
    if (typeof map[key] !== 'boolean') throw fail(`.${key} must be true or false`);
    return map[key];
  };
  const text = (key: string) => {
    const item = map[key];
    if (item === undefined || item === null) return undefined;
    if (typeof item !== 'string' && typeof item !== 'number') throw fail(`.${key} must be a string`);
    return String(item);
  };
  const strings = (key: string) => {
    const item = map[key] ?? {};
    if (typeof item !== 'object' || Array.isArray(item)) throw fail(`.${key} must be a map of names to strings`);
    return Object.fromEntries(Object.entries(item as Record<string, unknown>).map(([name, entry]) => {
      if (typeof entry === 'object' || entry === undefined) throw fail(`.${key}.${name} must be a string`);
      return [name, String(entry)];
    }));
  };
  const otel: OtelSpec = { enabled: flag('enabled'), headers: strings('headers'), insecure: flag('insecure'), resource: strings('resource') };
  const endpoint = text('endpoint');
  const timeout = text('timeout');
  if (endpoint !== undefined) otel.endpoint = endpoint;
  if (timeout !== undefined) {
    if (goDurationMs(timeout) === undefined) throw fail(`.timeout must be a duration such as 10s or 1m30s, not "${timeout}"`);
    otel.timeout = timeout;
  }
  if (otel.enabled && otel.endpoint === undefined) throw fail(' needs an endpoint when enabled');
  return otel;
}

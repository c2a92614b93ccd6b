// Executor forms and each executor's config (definition format: executors): `executor: <type>` or
// `{type, config}`, validated per type. Their runtimes (but shell) come with later capabilities.
import { canonicalKeys, weakBoolean, weakInteger, type ExecutorConfig } from '../core/index.ts';
import { isPlainMap, type FieldReader } from './field-reader.ts';
import type { Path } from './issues.ts';
import { SSH_KEYS, readSsh } from './services.ts';

/** The container runtime's name is the container executor's type; `container` is accepted too. */
export const CONTAINER_TYPES = ['docker', 'container'] as const;
const WORKFLOW_ACTION_TYPES = ['workflow-action', 'github-action', 'github_action', 'gha'] as const;
export const EXECUTOR_TYPES = [
  'shell', 'command', ...CONTAINER_TYPES, 'ssh', 'http', 'archive', 'mail', 'jq', 'dag', ...WORKFLOW_ACTION_TYPES,
] as const;

const CONFIG_KEYS: Record<string, readonly string[] | undefined> = {
  docker: ['image', 'containerName', 'pull', 'platform', 'autoRemove', 'container', 'host', 'network', 'exec'],
  ssh: SSH_KEYS,
  http: ['headers', 'body', 'query', 'timeout', 'silent', 'skipTLSVerify', 'json', 'debug'],
  archive: [
    'source', 'destination', 'format', 'compressionLevel', 'password', 'overwrite', 'preservePaths', 'stripComponents',
    'include', 'exclude', 'dryRun', 'verbose', 'followSymlinks', 'verifyIntegrity', 'continueOnError',
  ],
  mail: ['to', 'from', 'subject', 'message', 'attachments', 'contentType'],
  jq: ['raw'],
};

/** Executors whose config keys Dagu's decoder matches whatever their case (`skiptlsverify`, `JSON`). */
const CASE_FREE_TYPES = new Set(['http', 'archive', 'jq']);

/** A boolean as Dagu decodes one: true/false, a number (0 is false), or a ParseBool form. */
function checkBoolean(reader: FieldReader, config: Record<string, unknown>, key: string, at: Path): void {
  const value = config[key];
  // A variable reference is expanded as the step starts, and read then.
  if (typeof value === 'string' && value.includes('$')) return;
  if (!weakBoolean(value).ok) reader.report([...at, key], 'must be true or false');
}

/** An integer as Dagu decodes one: a number (its integer part), a boolean, or decimal digits in a string. */
function checkInteger(reader: FieldReader, config: Record<string, unknown>, key: string, at: Path, min?: number): void {
  const value = config[key];
  if (typeof value === 'string' && value.includes('$')) return;
  const number = weakInteger(value);
  if (!number.ok) reader.report([...at, key], 'must be an integer');
  else if (min !== undefined && value !== undefined && value !== null && number.value < min) reader.report([...at, key], `must be at least ${min}`);
}

/** format: one troupe reads and writes (Dagu's other names are refused, saying so); compressionLevel: zlib's range. */
function checkArchiveFormat(reader: FieldReader, config: Record<string, unknown>, at: Path): void {
  const format = reader.string(config, 'format', at)?.trim().toLowerCase();
  if (format !== undefined && format !== '' && !format.includes('$') && !['tar', 'tar.gz', 'tgz', 'zip'].includes(format)) {
    reader.report([...at, 'format'], 'must be tar, tar.gz (or tgz) or zip: the formats troupe reads and writes');
  }
  checkInteger(reader, config, 'compressionLevel', at, -1);
  const level = config.compressionLevel;
  if ((typeof level === 'number' && level > 9) || (typeof level === 'string' && /^[+-]?[0-9]+$/.test(level) && Number(level) > 9)) {
    reader.report([...at, 'compressionLevel'], 'must be between -1 and 9');
  }
}

export interface ExecutorContext {
  command?: string;
  script?: string;
  /** The DAG has its own container: a step's container config is ignored. */
  dagContainer: boolean;
  dagSsh: boolean;
}

export function readExecutor(reader: FieldReader, value: unknown, at: Path, context: ExecutorContext): ExecutorConfig {
  if (value === undefined || value === null) return { type: 'shell', config: {} };
  const path: Path = [...at, 'executor'];
  let executor: ExecutorConfig;
  if (typeof value === 'string') {
    executor = { type: value, config: {} };
  } else if (isPlainMap(value) && typeof value.type === 'string') {
    reader.knownKeys(value, ['type', 'config'], path);
    const config = value.config ?? {};
    if (!isPlainMap(config)) reader.report([...path, 'config'], 'must be a map');
    executor = { type: value.type, config: isPlainMap(config) ? config : {} };
  } else {
    reader.report(path, 'must be a type name or a map with type and config');
    return { type: 'shell', config: {} };
  }
  if (!(EXECUTOR_TYPES as readonly string[]).includes(executor.type)) {
    reader.report(isPlainMap(value) ? [...path, 'type'] : path, `unknown executor "${executor.type}"`);
    return executor;
  }
  if (CASE_FREE_TYPES.has(executor.type)) executor.config = canonicalKeys(executor.config, CONFIG_KEYS[executor.type] ?? []);
  checkConfig(reader, executor, [...path, 'config'], context);
  return executor;
}

/** The container executor's nested settings: container, host, network and exec. */
function checkContainerParts(reader: FieldReader, config: Record<string, unknown>, at: Path): void {
  const container = reader.map(config, 'container', at, 'env, workingDir, exposedPorts');
  if (container) {
    reader.knownKeys(container, ['env', 'workingDir', 'exposedPorts'], [...at, 'container']);
    reader.stringList(container, 'env', [...at, 'container']);
    reader.string(container, 'workingDir', [...at, 'container']);
    reader.map(container, 'exposedPorts', [...at, 'container'], 'port/protocol keys');
  }
  const host = reader.map(config, 'host', at, 'binds, portBindings');
  if (host) {
    reader.knownKeys(host, ['binds', 'portBindings'], [...at, 'host']);
    reader.stringList(host, 'binds', [...at, 'host']);
    const bindings = reader.map(host, 'portBindings', [...at, 'host'], 'port/protocol keys');
    for (const [port, list] of Object.entries(bindings ?? {})) {
      if (!Array.isArray(list)) reader.report([...at, 'host', 'portBindings', port], 'must be a list of {hostIP, hostPort}');
    }
  }
  const network = reader.map(config, 'network', at, 'EndpointsConfig');
  if (network) {
    reader.knownKeys(network, ['EndpointsConfig'], [...at, 'network']);
    reader.map(network, 'EndpointsConfig', [...at, 'network'], 'network names');
  }
  const exec = reader.map(config, 'exec', at, 'user, workingDir, env');
  if (exec) {
    reader.knownKeys(exec, ['user', 'workingDir', 'env'], [...at, 'exec']);
    reader.string(exec, 'user', [...at, 'exec']);
    reader.string(exec, 'workingDir', [...at, 'exec']);
    reader.stringList(exec, 'env', [...at, 'exec']);
  }
}

function checkConfig(reader: FieldReader, executor: ExecutorConfig, at: Path, context: ExecutorContext): void {
  const type = (CONTAINER_TYPES as readonly string[]).includes(executor.type) ? 'docker' : executor.type;
  const config = executor.config;
  const keys = CONFIG_KEYS[type];
  if (keys) reader.knownKeys(config, keys, at);
  switch (type) {
    case 'docker':
      if (!context.dagContainer && reader.string(config, 'image', at) === undefined && reader.string(config, 'containerName', at) === undefined) {
        reader.report(at, 'a container executor needs image or containerName');
      }
      if (config.pull !== undefined) reader.oneOf(config, 'pull', at, ['always', 'missing', 'never'], 'missing');
      reader.string(config, 'platform', at);
      reader.boolean(config, 'autoRemove', at);
      checkContainerParts(reader, config, at);
      break;
    case 'ssh': {
      const ssh = readSsh(reader, config, at);
      if (!context.dagSsh && ssh.host === undefined) reader.report(at, 'an ssh executor needs a host (here or in the DAG\'s ssh)');
      break;
    }
    case 'http': {
      const [method, url, ...rest] = (context.command ?? '').trim().split(/\s+/);
      if (!method || !url || rest.length > 0 || !/^[A-Z]+$/.test(method)) reader.report(at.slice(0, -2), 'an http step\'s command is a method and a URL, such as "GET https://example.com"');
      reader.stringMap(config, 'headers', at);
      reader.stringMap(config, 'query', at);
      reader.string(config, 'body', at);
      checkInteger(reader, config, 'timeout', at);
      for (const key of ['silent', 'skipTLSVerify', 'json', 'debug']) checkBoolean(reader, config, key, at);
      break;
    }
    case 'archive': {
      const operation = context.command?.trim();
      if (operation !== 'extract' && operation !== 'create' && operation !== 'list') reader.report(at.slice(0, -2), 'an archive step\'s command is extract, create or list');
      for (const key of ['source', 'destination', 'password']) reader.string(config, key, at);
      for (const key of ['include', 'exclude']) reader.stringList(config, key, at);
      for (const key of ['overwrite', 'preservePaths', 'dryRun', 'verbose', 'followSymlinks', 'verifyIntegrity', 'continueOnError']) checkBoolean(reader, config, key, at);
      checkInteger(reader, config, 'stripComponents', at, 0);
      checkArchiveFormat(reader, config, at);
      if (operation === 'create' && typeof config.password === 'string' && config.password !== '') reader.report([...at, 'password'], 'password is only for extract and list');
      break;
    }
    case 'mail':
      if ((reader.stringList(config, 'to', at) ?? []).length === 0) reader.report(at, 'a mail step needs to');
      for (const key of ['from', 'subject', 'message', 'contentType']) reader.string(config, key, at);
      reader.stringList(config, 'attachments', at);
      break;
    case 'jq':
      // No command is accepted, as Dagu accepts it: the step prints nothing and says why on stderr.
      // The script is read as JSON when the step runs, after its variables are expanded.
      checkBoolean(reader, config, 'raw', at);
      break;
    default:
      break;
  }
}

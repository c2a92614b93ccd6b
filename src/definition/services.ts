// Root fields for the services a run may use (definition format: root fields): container, ssh,
// registry credentials, mail, SMTP and tracing. Read and validated now; their runtimes come later.
import { setOwn } from '../core/index.ts';
import type { ContainerSpec, MailSpec, OtelSpec, SmtpSpec, SshSpec } from '../core/index.ts';
import { dropUndefined, type FieldReader } from './field-reader.ts';
import type { Path } from './issues.ts';
import { goDurationMs } from './go-duration.ts';

const CONTAINER_KEYS = [
  'image', 'pullPolicy', 'env', 'volumes', 'workingDir', 'platform', 'user', 'ports', 'network', 'startup',
  'command', 'waitFor', 'logPattern', 'restartPolicy', 'keepContainer',
] as const;
export const SSH_KEYS = ['user', 'host', 'port', 'key', 'password', 'strictHostKey', 'knownHostFile'] as const;
const MAIL_KEYS = ['from', 'to', 'prefix', 'attachLogs'] as const;
const SMTP_KEYS = ['host', 'port', 'username', 'password'] as const;
const OTEL_KEYS = ['enabled', 'endpoint', 'headers', 'insecure', 'timeout', 'resource'] as const;

export function readContainer(reader: FieldReader, root: Record<string, unknown>): ContainerSpec | undefined {
  const value = reader.map(root, 'container', [], 'image and the container settings');
  if (!value) return undefined;
  const at: Path = ['container'];
  reader.knownKeys(value, CONTAINER_KEYS, at);
  const container: ContainerSpec = {
    image: reader.string(value, 'image', at),
    pullPolicy: reader.oneOf(value, 'pullPolicy', at, ['always', 'missing', 'never'], 'missing'),
    env: reader.stringList(value, 'env', at) ?? [],
    volumes: reader.stringList(value, 'volumes', at) ?? [],
    workingDir: reader.string(value, 'workingDir', at),
    platform: reader.string(value, 'platform', at),
    user: reader.string(value, 'user', at),
    ports: reader.stringList(value, 'ports', at) ?? [],
    network: reader.string(value, 'network', at),
    startup: reader.oneOf(value, 'startup', at, ['keepalive', 'entrypoint', 'command'], 'keepalive'),
    command: reader.stringList(value, 'command', at) ?? [],
    waitFor: reader.oneOf(value, 'waitFor', at, ['running', 'healthy'], 'running'),
    logPattern: reader.string(value, 'logPattern', at),
    restartPolicy: reader.oneOf(value, 'restartPolicy', at, ['no', 'always', 'unless-stopped'], 'no'),
    keepContainer: reader.boolean(value, 'keepContainer', at) ?? false,
  };
  if (container.image === undefined) reader.report(at, 'needs an image');
  container.volumes.forEach((volume, index) => {
    if (!/^[^:]+:[^:]+(:(ro|rw))?$/.test(volume)) reader.report([...at, 'volumes', index], 'must be host:container or host:container:ro|rw');
  });
  container.ports.forEach((port, index) => {
    if (!/^(?:(?:(?:[0-9.]+|\[[0-9a-fA-F:]+\]):)?[0-9]*:)?[0-9]+(?:\/(?:tcp|udp|sctp))?$/i.test(port.trim())) {
      reader.report([...at, 'ports', index], 'must be a port: 80, 8080:80 or 127.0.0.1:8080:80, with /tcp or /udp');
    }
  });
  if (container.startup === 'command' && container.command.length === 0) reader.report([...at, 'command'], 'startup "command" needs a command');
  if (container.logPattern !== undefined) checkRegExp(reader, container.logPattern, [...at, 'logPattern']);
  return dropUndefined(container);
}

/** The DAG's or a step's ssh settings; a step's replace the DAG's whole. */
export function readSsh(reader: FieldReader, value: Record<string, unknown>, at: Path): SshSpec {
  reader.knownKeys(value, SSH_KEYS, at);
  return dropUndefined({
    user: reader.string(value, 'user', at),
    host: reader.string(value, 'host', at),
    port: reader.string(value, 'port', at) ?? '22',
    key: reader.string(value, 'key', at),
    password: reader.string(value, 'password', at),
    strictHostKey: reader.boolean(value, 'strictHostKey', at) ?? true,
    knownHostFile: reader.string(value, 'knownHostFile', at),
  });
}

export function readRootSsh(reader: FieldReader, root: Record<string, unknown>): SshSpec | undefined {
  const value = reader.map(root, 'ssh', [], 'user, host, port, key...');
  if (!value) return undefined;
  const ssh = readSsh(reader, value, ['ssh']);
  if (ssh.host === undefined) reader.report(['ssh'], 'needs a host');
  if (!/^[0-9]+$/.test(ssh.port)) reader.report(['ssh', 'port'], 'must be a port number');
  return ssh;
}

export function readRegistryAuths(reader: FieldReader, root: Record<string, unknown>): Record<string, { username?: string; password?: string }> {
  const value = reader.map(root, 'registryAuths', [], 'registry hosts mapped to {username, password}');
  if (!value) return {};
  const auths: Record<string, { username?: string; password?: string }> = {};
  for (const [host, item] of Object.entries(value)) {
    const at: Path = ['registryAuths', host];
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      reader.report(at, 'must be a map with username and password');
      continue;
    }
    const credentials = item as Record<string, unknown>;
    reader.knownKeys(credentials, ['username', 'password'], at);
    setOwn(auths, host, dropUndefined({ username: reader.string(credentials, 'username', at), password: reader.string(credentials, 'password', at) }));
  }
  return auths;
}

export function readMailOn(reader: FieldReader, root: Record<string, unknown>): { failure: boolean; success: boolean } {
  const value = reader.map(root, 'mailOn', [], 'failure and success');
  if (!value) return { failure: false, success: false };
  reader.knownKeys(value, ['failure', 'success'], ['mailOn']);
  return { failure: reader.boolean(value, 'failure', ['mailOn']) ?? false, success: reader.boolean(value, 'success', ['mailOn']) ?? false };
}

export function readMail(reader: FieldReader, root: Record<string, unknown>, key: 'errorMail' | 'infoMail'): MailSpec | undefined {
  const value = reader.map(root, key, [], 'from, to, prefix, attachLogs');
  if (!value) return undefined;
  const at: Path = [key];
  reader.knownKeys(value, MAIL_KEYS, at);
  const mail: MailSpec = dropUndefined({
    from: reader.string(value, 'from', at),
    to: reader.stringList(value, 'to', at) ?? [],
    prefix: reader.string(value, 'prefix', at),
    attachLogs: reader.boolean(value, 'attachLogs', at) ?? false,
  });
  // An address may come from a variable (`${ALERT_TO}`), expanded when the run starts.
  for (const address of [mail.from, ...mail.to]) {
    if (address !== undefined && !address.includes('$') && !/^[^@\s]+@[^@\s]+$/.test(address)) reader.report(at, `"${address}" is not an email address`);
  }
  return mail;
}

export function readSmtp(reader: FieldReader, root: Record<string, unknown>): SmtpSpec | undefined {
  const value = reader.map(root, 'smtp', [], 'host, port, username, password');
  if (!value) return undefined;
  reader.knownKeys(value, SMTP_KEYS, ['smtp']);
  const smtp: SmtpSpec = dropUndefined({
    host: reader.string(value, 'host', ['smtp']),
    port: reader.string(value, 'port', ['smtp']),
    username: reader.string(value, 'username', ['smtp']),
    password: reader.string(value, 'password', ['smtp']),
  });
  if (smtp.port !== undefined && !/^[0-9]+$/.test(smtp.port)) reader.report(['smtp', 'port'], 'must be a port number');
  return smtp;
}

export function readOtel(reader: FieldReader, root: Record<string, unknown>): OtelSpec | undefined {
  const value = reader.map(root, 'otel', [], 'enabled, endpoint, headers, insecure, timeout, resource');
  if (!value) return undefined;
  const at: Path = ['otel'];
  reader.knownKeys(value, OTEL_KEYS, at);
  const otel: OtelSpec = dropUndefined({
    enabled: reader.boolean(value, 'enabled', at) ?? false,
    endpoint: reader.string(value, 'endpoint', at),
    headers: reader.stringMap(value, 'headers', at) ?? {},
    insecure: reader.boolean(value, 'insecure', at) ?? false,
    timeout: reader.string(value, 'timeout', at),
    resource: reader.stringMap(value, 'resource', at) ?? {},
  });
  if (otel.timeout !== undefined && goDurationMs(otel.timeout) === undefined) {
    reader.report([...at, 'timeout'], 'must be a duration such as 10s or 1m30s');
  }
  if (otel.enabled && otel.endpoint === undefined) reader.report(at, 'needs an endpoint when enabled');
  return otel;
}

export function checkRegExp(reader: FieldReader, pattern: string, at: Path): void {
  try {
    new RegExp(pattern);
  } catch (error) {
    reader.report(at, `invalid regular expression: ${(error as Error).message}`);
  }
}

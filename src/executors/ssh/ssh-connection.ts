// Opens an authenticated ssh2 connection for one step: the keys to try (the configured one, or the
// standard ones), then the password; the host key checked against known_hosts unless strictHostKey
// is off. Every failure comes back as a message, within READY_TIMEOUT_MS.
import { readFile } from 'node:fs/promises';
import type { Client, ConnectConfig, PasswordAuthMethod, PublicKeyAuthMethod } from 'ssh2';
import { checkHostKey } from './known-hosts.ts';
import { defaultKeyPaths, type SshSettings } from './ssh-settings.ts';

type Ssh2 = typeof import('ssh2');
let loaded: Promise<Ssh2> | undefined;

/**
 * ssh2, loaded by the first ssh step of a worker thread rather than with every thread. It is
 * CommonJS whose exports Node cannot name statically: they are read off its default export.
 */
function ssh2(): Promise<Ssh2> {
  loaded ??= import('ssh2').then((module) => (module as unknown as { default: Ssh2 }).default);
  return loaded;
}

/** Handshake and authentication together (ssh2's own default); a refused port fails at once. */
export const READY_TIMEOUT_MS = 20_000;
/** A connection silent for about a minute during a long command is taken for dead. */
const KEEPALIVE_INTERVAL_MS = 15_000;
const KEEPALIVE_COUNT_MAX = 4;

export type Connection = { kind: 'ok'; client: Client } | { kind: 'failed'; message: string } | { kind: 'cancelled' };

export interface PendingConnection {
  readonly connection: Promise<Connection>;
  /** Gives up: the socket is closed, and `connection` settles as cancelled. */
  cancel(): void;
}

type AuthMethod = PublicKeyAuthMethod | PasswordAuthMethod;

export function connect(settings: SshSettings): PendingConnection {
  let cancelled = false;
  let client: Client | undefined;
  let settle: ((connection: Connection) => void) | undefined;
  const connection = new Promise<Connection>((resolve) => {
    settle = resolve;
    void open(settings, () => cancelled, (opened) => (client = opened)).then(resolve);
  });
  return {
    connection,
    cancel() {
      cancelled = true;
      client?.destroy();
      settle?.({ kind: 'cancelled' });
    },
  };
}

async function open(settings: SshSettings, isCancelled: () => boolean, onClient: (client: Client) => void): Promise<Connection> {
  const where = `ssh ${settings.user}@${settings.host}:${settings.port}`;
  const { Client: SshClient } = await ssh2();
  const auth = await authMethods(settings);
  if (auth.kind === 'failed') return { kind: 'failed', message: `${where}: ${auth.message}` };
  let knownHosts: string | undefined;
  if (settings.strictHostKey) {
    try {
      knownHosts = await readFile(settings.knownHostFile, 'utf8');
    } catch (error) {
      return { kind: 'failed', message: `${where}: strictHostKey is on and the known hosts file cannot be read: ${(error as Error).message}` };
    }
  }
  if (isCancelled()) return { kind: 'cancelled' };
  return new Promise((resolve) => {
    const client = new SshClient();
    onClient(client);
    let hostKeyProblem: string | undefined;
    let settled = false;
    const finish = (connection: Connection) => {
      if (settled) return;
      settled = true;
      if (connection.kind !== 'ok') client.destroy();
      resolve(connection);
    };
    client.once('ready', () => finish({ kind: 'ok', client }));
    client.on('error', (error) => finish({ kind: 'failed', message: `${where}: ${hostKeyProblem ?? error.message}` }));
    client.once('close', () => finish({ kind: 'failed', message: `${where}: the connection closed during the handshake` }));
    const config: ConnectConfig = {
      host: settings.host,
      port: settings.port,
      username: settings.user,
      authHandler: auth.methods,
      readyTimeout: READY_TIMEOUT_MS,
      keepaliveInterval: KEEPALIVE_INTERVAL_MS,
      keepaliveCountMax: KEEPALIVE_COUNT_MAX,
    };
    if (knownHosts !== undefined) {
      const text = knownHosts;
      config.hostVerifier = (key: Buffer) => {
        const verdict = checkHostKey(text, settings.knownHostFile, settings.host, settings.port, key);
        if (verdict.kind === 'known') return true;
        hostKeyProblem = verdict.message;
        return false;
      };
    }
    try {
      client.connect(config);
    } catch (error) {
      finish({ kind: 'failed', message: `${where}: ${(error as Error).message}` });
    }
  });
}

type AuthOutcome = { kind: 'ok'; methods: AuthMethod[] } | { kind: 'failed'; message: string };

/** The configured key alone, or each standard key that exists and parses; the password last. */
async function authMethods(settings: SshSettings): Promise<AuthOutcome> {
  const username = settings.user;
  const methods: AuthMethod[] = [];
  const skipped: string[] = [];
  if (settings.key !== undefined) {
    const key = await usableKey(settings.key);
    if (key.kind === 'failed') return key;
    methods.push({ type: 'publickey', username, key: key.key });
  } else {
    for (const path of defaultKeyPaths()) {
      const key = await usableKey(path);
      if (key.kind === 'ok') methods.push({ type: 'publickey', username, key: key.key });
      else if (!key.missing) skipped.push(key.message);
    }
  }
  if (settings.password !== undefined) methods.push({ type: 'password', username, password: settings.password });
  if (methods.length > 0) return { kind: 'ok', methods };
  const tried = defaultKeyPaths().join(', ');
  return { kind: 'failed', message: `no key and no password to log in with: none of ${tried} could be used${skipped.length > 0 ? ` (${skipped.join('; ')})` : ''}` };
}

type UsableKey = { kind: 'ok'; key: Buffer } | { kind: 'failed'; message: string; missing: boolean };

async function usableKey(path: string): Promise<UsableKey> {
  let key: Buffer;
  try {
    key = await readFile(path);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { kind: 'failed', message: `cannot read the key ${path}: ${(error as Error).message}`, missing };
  }
  // Parsed here so that a bad key is named; ssh2 would skip it silently.
  const parsed = (await ssh2()).utils.parseKey(key);
  if (parsed instanceof Error) return { kind: 'failed', message: `cannot use the key ${path}: ${parsed.message}`, missing: false };
  return { kind: 'ok', key };
}

// Which ssh settings a step connects with (definition format: ssh settings): its own config, or else the
// DAG's `ssh`, never a mix of the two, with 2.4's defaults filled in. Pure: reads no file.
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { SshSpec } from '../../core/index.ts';

export interface SshSettings {
  user: string;
  host: string;
  port: number;
  /** An absolute path; absent when the standard keys are to be tried. */
  key?: string;
  password?: string;
  strictHostKey: boolean;
  /** An absolute path. */
  knownHostFile: string;
}

/** The keys tried, in this order, when no key is set: RSA, ECDSA, Ed25519, DSA. */
export const DEFAULT_KEY_NAMES = ['id_rsa', 'id_ecdsa', 'id_ed25519', 'id_dsa'] as const;

export type SettingsOutcome = { kind: 'ok'; settings: SshSettings } | { kind: 'invalid'; message: string };

/**
 * `config`: the step's executor config, as written (variables expanded). A config with any field
 * replaces the DAG's settings whole, as Dagu does: a step naming only another host does not borrow
 * the DAG's user or key. Relative paths resolve against `workingDir`, `~/` against the home of the
 * user the server runs as.
 */
export function sshSettings(config: Record<string, unknown>, dagSsh: SshSpec | undefined, workingDir: string): SettingsOutcome {
  const source: Record<string, unknown> = Object.keys(config).length > 0 ? config : { ...dagSsh };
  if (Object.keys(source).length === 0) return invalid('no ssh settings: set the step\'s executor config or the DAG\'s ssh');
  const text = (key: string): string | undefined => {
    const value = source[key];
    if (value === undefined || value === null || value === '') return undefined;
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  };
  const host = text('host');
  if (host === undefined) return invalid('no host: the ssh settings need one');
  const portText = text('port') ?? '22';
  const port = Number(portText);
  if (!/^[0-9]+$/.test(portText) || port < 1 || port > 65535) return invalid(`port "${portText}" is not a port number`);
  const strict = source.strictHostKey;
  const strictHostKey = strict === undefined || strict === null ? true : strict === true || strict === 'true';
  const key = text('key');
  const password = text('password');
  const home = homedir();
  return {
    kind: 'ok',
    settings: {
      // Without a user, OpenSSH logs in as the local one: the user the server runs as.
      user: text('user') ?? localUser(),
      host,
      port,
      ...(key !== undefined ? { key: localPath(key, workingDir, home) } : {}),
      ...(password !== undefined ? { password } : {}),
      strictHostKey,
      knownHostFile: localPath(text('knownHostFile') ?? '~/.ssh/known_hosts', workingDir, home),
    },
  };
}

/** The standard key files, in the order they are tried. */
export function defaultKeyPaths(): string[] {
  return DEFAULT_KEY_NAMES.map((name) => join(homedir(), '.ssh', name));
}

function localPath(path: string, workingDir: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(workingDir, path);
}

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers).
    return process.env.USER ?? 'root';
  }
}

function invalid(message: string): SettingsOutcome {
  return { kind: 'invalid', message: `ssh: ${message}` };
}

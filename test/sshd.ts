// A real OpenSSH server for tests: /usr/sbin/sshd on a free loopback port, with its own host key,
// authorized_keys, pid file and config in a temp dir, run as root (as the tests are, here and in CI).
// A client key pair for root, a known_hosts line for the host key, and optionally a user who logs in
// with a password.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, listening } from './support/ports.ts';

export const SSHD = '/usr/sbin/sshd';

/** Why sshd cannot run here, or undefined when it can. In CI a reason fails the test. */
export function sshdMissing(): string | undefined {
  if (!existsSync(SSHD)) return `${SSHD} is not installed (apt-get install openssh-server)`;
  if (process.getuid?.() !== 0) return 'sshd tests run as root';
  return undefined;
}

export interface Sshd {
  port: number;
  dir: string;
  /** Root's private key (ed25519, no passphrase), listed in authorized_keys. */
  clientKey: string;
  /** A known_hosts file listing this server's host key for [127.0.0.1]:port. */
  knownHosts: string;
  /** The host key line's `type base64` part. */
  hostKey: string;
  /** What sshd wrote to stderr so far (its log, with -e). */
  log(): string;
  stop(): Promise<void>;
}

export const PASSWORD_USER = 'troupesshtest';

export async function startSshd(): Promise<Sshd> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-sshd-'));
  // sshd's privilege separation directory; a fresh machine has it only while the service runs.
  await mkdir('/run/sshd', { recursive: true });
  keygen(join(dir, 'host_ed25519'));
  keygen(join(dir, 'client_ed25519'));
  await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_ed25519.pub')), { mode: 0o600 });
  const hostKey = (await readFile(join(dir, 'host_ed25519.pub'), 'utf8')).trim().split(/\s+/).slice(0, 2).join(' ');
  const port = await freePort();
  await writeFile(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostKey}\n`);
  await writeFile(join(dir, 'sshd_config'), [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_ed25519')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'PermitRootLogin yes',
    'PubkeyAuthentication yes',
    'PasswordAuthentication yes',
    'KbdInteractiveAuthentication no',
    // Without PAM, sshd checks passwords against /etc/shadow itself.
    'UsePAM no',
    // The temp dir sits under the world-writable /tmp, which StrictModes refuses for authorized_keys.
    'StrictModes no',
    `LogLevel ${process.env.TROUPE_SSHD_LOG_LEVEL ?? 'VERBOSE'}`,
    '',
  ].join('\n'));
  const child = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  await listening('sshd', port, child, () => log);
  return {
    port, dir, hostKey,
    clientKey: join(dir, 'client_ed25519'),
    knownHosts: join(dir, 'known_hosts'),
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A local user who can log in with `password` only (no key of theirs is authorized). */
export function ensurePasswordUser(password: string): void {
  try {
    execFileSync('id', [PASSWORD_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', PASSWORD_USER], { stdio: 'pipe' });
  }
  execFileSync('chpasswd', { input: `${PASSWORD_USER}:${password}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
}

export function keygen(path: string, type = 'ed25519'): void {
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'troupe-test', '-f', path], { stdio: 'ignore' });
}


// A real Redis for tests: Debian's redis-server on a free loopback port, in a temp dir, with no
// persistence (nothing written to disk), optionally with a password. Stopped with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, listening } from './support/ports.ts';

export const REDIS_SERVER = '/usr/bin/redis-server';

/** Why Redis cannot run here, or undefined when it can. In CI a reason fails the test. */
export function redisMissing(): string | undefined {
  return existsSync(REDIS_SERVER) ? undefined : `${REDIS_SERVER} is not installed (apt-get install redis-server)`;
}

export interface RedisServer {
  port: number;
  /** redis://[:password@]127.0.0.1:port */
  url: string;
  /** What the server printed so far. */
  log(): string;
  stop(): Promise<void>;
}

/** `port`: a given one (a Redis started again where one was stopped); default a free one. */
export async function startRedis(options: { password?: string; port?: number } = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-redis-'));
  const port = options.port ?? await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--loglevel', 'warning'];
  if (options.password) args.push('--requirepass', options.password);
  const child: ChildProcess = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await listening('redis-server', port, child, () => output, 10_000);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : '';
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    log: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}


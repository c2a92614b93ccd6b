// A real `troupe worker` process for tests: the command's own entry under tsx, on a Redis the test
// started, with its own scratch home. Ready once its heartbeat is in Redis (GET /workers lists it).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const cli = resolve(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');

export interface WorkerProcess {
  id: string;
  child: ChildProcess;
  /** Its scratch home (removed when it stops). */
  home: string;
  /** What it printed so far (stdout and stderr). */
  log(): string;
  /** SIGTERM (a drain), then its exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a machine gone. */
  kill(): Promise<void>;
}

/** Whether GET /workers on the server (read at each call: a test may start it anew) lists a worker of that id: startWorkerProcess's readiness check. */
export function listedOn(server: () => { call(method: string, path: string): Promise<{ body: any }> }): (id: string) => Promise<boolean> {
  return async (id) => ((await server().call('GET', '/workers')).body.workers as Array<{ id: string }>).some((worker) => worker.id === id);
}

export interface WorkerSpec {
  id: string;
  redisUrl: string;
  labels?: string;
  maxActiveRuns?: number;
  extraArgs?: string[];
  /** Variables the worker process has beside the test's own. */
  env?: Record<string, string>;
}

/** Starts the worker; resolves once `isListed(id)` says the server sees it. */
export async function startWorkerProcess(spec: WorkerSpec, isListed: (id: string) => Promise<boolean>): Promise<WorkerProcess> {
  const home = await mkdtemp(join(tmpdir(), `troupe-worker-${spec.id}-`));
  const args = ['--import', 'tsx', cli, 'worker', '--redis', spec.redisUrl, '--id', spec.id, '--home', home,
    ...(spec.labels !== undefined ? ['--labels', spec.labels] : []), ...(spec.maxActiveRuns !== undefined ? ['--max-active-runs', String(spec.maxActiveRuns)] : []), ...(spec.extraArgs ?? [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TROUPE_LOG_LEVEL: 'warn', ...spec.env } });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const cleanup = () => rm(home, { recursive: true, force: true });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await cleanup();
      throw new Error(`troupe worker ${spec.id} exited (${child.exitCode}): ${output}`);
    }
    if (await isListed(spec.id)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await cleanup();
      throw new Error(`troupe worker ${spec.id} was not listed within 20 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    id: spec.id, child, home, log: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      await cleanup();
      return code;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      await cleanup();
    },
  };
}

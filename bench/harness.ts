// Starts the compiled server (what users run) in a child process and talks to it with undici.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, constants as fsConstants, openSync } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';

export interface BenchServer {
  base: string;
  pid: number;
  home: string;
  /** What creating a file cost in the home (ms) when it was chosen, and how it was chosen (chooseHome). */
  place: { fileCreateMs: number; spreadFolders: boolean; attempts: number };
  /** The server's start line: carrier and how steps start. */
  startLine: string;
  get(path: string): Promise<any>;
  post(path: string, body: unknown): Promise<{ status: number; body: any }>;
  writeDag(name: string, spec: string): Promise<void>;
  rssMb(): Promise<number>;
  /** RSS of the server's child processes (the step hosts), summed. */
  childrenRssMb(): Promise<number>;
  stop(): Promise<void>;
}

/** Mean cost of creating (and closing) an empty file in `dir`, in ms; the files stay. */
export function fileCreateMs(dir: string, files = 40): number {
  const t0 = performance.now();
  for (let i = 0; i < files; i++) closeSync(openSync(join(dir, `f${i}`), 'a'));
  return (performance.now() - t0) / files;
}

/** A home this cheap to create files in is on a quiet part of the file system (see chooseHome). */
const QUIET_CREATE_MS = 0.1;
const HOME_ATTEMPTS = 6;

/**
 * The server's home: a new folder under $TROUPE_BENCH_DIR, else under the first writable of the
 * candidates. Every run creates a log file, and on the development VMs (ext4 without a journal)
 * creating a file costs 0.02 ms, or 0.3 - 1.1 ms for minutes after many files were deleted nearby
 * (README.md): then the benchmark would measure the previous bench's or test suite's clean-up.
 * The parent is marked `chattr +T` (ext4 spreads its subfolders over the disk like top-level
 * folders), and a home where creating a file costs more than QUIET_CREATE_MS is set aside for a
 * fresh one, up to HOME_ATTEMPTS times. The probe's files stay in the home (deleting them would
 * leave the trace this avoids).
 */
export async function chooseHome(): Promise<Home> {
  const candidates = process.env.TROUPE_BENCH_DIR
    ? [process.env.TROUPE_BENCH_DIR]
    : [join(homedir(), '.cache', 'troupe-bench'), '/var/tmp/troupe-bench', join(tmpdir(), 'troupe-bench')];
  let parent: string | undefined;
  for (const dir of candidates) {
    try {
      await mkdir(dir, { recursive: true });
      await access(dir, fsConstants.W_OK);
      parent = dir;
      break;
    } catch {
      // not writable here
    }
  }
  if (!parent) throw new Error(`no writable directory for the benchmark among ${candidates.join(', ')}`);
  // Not ext4, or no chattr: the homes stay where the file system puts them.
  const spreadFolders = await new Promise<boolean>((done) => execFile('chattr', ['+T', parent], (error) => done(!error)));
  const tried: Home[] = [];
  while (tried.length < HOME_ATTEMPTS && !tried.some((home) => home.fileCreateMs <= QUIET_CREATE_MS)) tried.push(await homeWithin(parent));
  tried.sort((a, b) => a.fileCreateMs - b.fileCreateMs);
  await Promise.all(tried.slice(1).map(({ home }) => rm(home, { recursive: true, force: true })));
  return { ...tried[0], spreadFolders, attempts: tried.length };
}

type Home = { home: string; fileCreateMs: number; spreadFolders: boolean; attempts: number };

/** A new home inside `folder`, with what creating a file costs there. */
async function homeWithin(folder: string): Promise<Home> {
  const home = await mkdtemp(join(folder, 'run-'));
  const probe = join(home, '.bench-probe');
  await mkdir(probe);
  return { home, fileCreateMs: fileCreateMs(probe), spreadFolders: false, attempts: 1 };
}

/** Whether `checkout`'s build reads queues from config.yaml (its config module moved from cli/ to config/). */
async function knowsQueues(checkout: string): Promise<boolean> {
  for (const file of [['cli', 'config.js'], ['config', 'config-file.js']]) {
    const text = await readFile(resolve(checkout, 'dist', ...file), 'utf8').catch(() => '');
    if (text.includes('queues')) return true;
  }
  return false;
}

/**
 * Starts `troupe start-all` from `checkout`'s `dist/` (this checkout by default). Its home is
 * chosen by chooseHome, or made inside `within` (a folder chooseHome chose): servers compared
 * side by side create their files in the same part of the disk.
 */
export async function startBenchServer(checkout = resolve(import.meta.dirname, '..'), within?: string): Promise<BenchServer> {
  const cli = resolve(checkout, 'dist', 'cli', 'main.js');
  const { home, ...place } = within ? await homeWithin(within) : await chooseHome();
  // TROUPE_BENCH_NODE_ARGS passes flags to the server's node, e.g. "--cpu-prof --cpu-prof-dir=prof".
  const nodeArgs = (process.env.TROUPE_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // The custom queue of the queue-drain workload; the other workloads do not use it. A build from
  // before queues refuses the key (bench:ab may compare with one).
  if (await knowsQueues(checkout)) {
    await writeFile(join(home, 'config.yaml'), 'queues:\n  config:\n    - name: bench-q\n      maxConcurrency: 16\n');
  }
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, cli, 'start-all', '--home', home, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  // TROUPE_BENCH_SERVER_LOG keeps what the server prints, e.g. with TROUPE_BENCH_NODE_ARGS=--trace-gc.
  if (process.env.TROUPE_BENCH_SERVER_LOG) child.stdout!.pipe(createWriteStream(process.env.TROUPE_BENCH_SERVER_LOG));
  const [startLine, base] = await new Promise<[string, string]>((resolvePromise, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /^.*listening on (http:\/\/\S+\/api\/v2).*$/m.exec(output);
      if (match) resolvePromise([match[0], match[1]]);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  const dispatcher = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await request(`${base}${path}`, { method, dispatcher, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.body.text();
    return { status: response.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  return {
    base, home, pid: child.pid!, place, startLine,
    get: async (path) => (await call('GET', path)).body,
    post: (path, body) => call('POST', path, body),
    writeDag: (name, spec) => writeFile(join(home, 'dags', `${name}.yaml`), spec),
    rssMb: async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
    },
    childrenRssMb: async () => {
      let total = 0;
      for (const entry of await readdir('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const status = await readFile(`/proc/${entry}/status`, 'utf8');
          if (/PPid:\s+(\d+)/.exec(status)?.[1] === String(child.pid)) total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
        } catch {
          // the process ended while we looked
        }
      }
      return total;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolvePromise) => child.once('exit', resolvePromise));
      await dispatcher.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

export const sleep = (ms: number) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

/** Runs spawn-reference.mjs in a plain `node`: what one `sh -c true` costs on this machine now. */
export async function shSpawnReference(): Promise<{ spawnMs: number; perSec: number }> {
  const script = resolve(import.meta.dirname, 'spawn-reference.mjs');
  const output = await new Promise<string>((resolvePromise, reject) => {
    execFile(process.execPath, [script], (error, stdout) => (error ? reject(error) : resolvePromise(stdout)));
  });
  return JSON.parse(output);
}

const FINAL = new Set([2, 3, 4, 6]);

/** Polls a run every `intervalMs` until its status is final; returns the run. */
export async function pollUntilFinal(server: BenchServer, name: string, dagRunId: string, intervalMs = 1, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await server.get(`/dag-runs/${name}/${dagRunId}`);
    if (body?.dagRun && FINAL.has(body.dagRun.status)) return body.dagRun;
    if (Date.now() > deadline) throw new Error(`run ${name}/${dagRunId} did not finish`);
    await sleep(intervalMs);
  }
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** Starts a stored DAG `warmup + repeats` times, one after another; the first `warmup` are timed apart. */
export async function timeRuns(server: BenchServer, name: string, repeats: number, warmup = 1): Promise<{ times: number[]; warmupTimes: number[] }> {
  const times: number[] = [];
  const warmupTimes: number[] = [];
  for (let i = 0; i < warmup + repeats; i++) {
    const t0 = performance.now();
    const { body } = await server.post(`/dags/${name}/start`, {});
    const run = await pollUntilFinal(server, name, body.dagRunId, 1);
    if (run.status !== 4) throw new Error(`${name} run ended ${run.statusLabel}`);
    (i < warmup ? warmupTimes : times).push(performance.now() - t0);
  }
  return { times, warmupTimes };
}

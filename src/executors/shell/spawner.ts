// How a step's process starts. With the troupe_spawn addon (native/spawn.c, built by `npm ci`):
// posix_spawn, which does not copy the caller's page tables. Without it: child_process, which forks
// (measured here: `sh -c true` costs 1.2-1.4 ms that way against 0.6 ms with posix_spawn).
// Either way the process gets its own process group, /dev/null as stdin and pipes as stdout/stderr.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants as osConstants } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { SpawnMode } from '../protocol.ts';

/** The part of a Readable the executor uses: chunks, then 'end' and 'close'. */
export interface OutputStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  once(event: 'end' | 'close', listener: () => void): unknown;
}

export interface StepProcess {
  pid: number;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Settles when the process ends: an exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnOptions {
  cwd: string;
  env: Record<string, string>;
}

/** Starts argv[0] (looked up on env.PATH when it has no slash); rejects when it cannot start. */
export type Spawner = (argv: string[], options: SpawnOptions) => Promise<StepProcess>;

interface NativeSpawn {
  spawn(file: string, argv: string[], envp: string[], cwd: string, stdoutFd: number, stderrFd: number,
    onExit: (code: number | null, signal: number | null) => void): number;
  spawnAsync(file: string, argv: string[], envp: string[], cwd: string, stdoutFd: number, stderrFd: number,
    onSpawned: (error: Error | null, pid: number | null) => void, onExit: (code: number | null, signal: number | null) => void): void;
  pipe(): [number, number];
  close(fd: number): void;
  readPipe(fd: number, onData: (chunk: Buffer | null) => void): void;
  supported(): boolean;
}

export const nodeSpawner: Spawner = (argv, { cwd, env }) => new Promise((resolve, reject) => {
  const child = spawn(argv[0], argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => done({ code, signal }));
  });
  child.once('error', reject);
  child.once('spawn', () => {
    child.off('error', reject);
    child.on('error', () => {}); // later errors (a failed kill) are not the step's
    resolve({ pid: child.pid!, stdout: child.stdout!, stderr: child.stderr!, exited });
  });
});

const signalNames = new Map(Object.entries(osConstants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));

function loadNative(): NativeSpawn | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    // build/ sits at the package root, three levels above src/executors/shell and dist/executors/shell.
    const native = createRequire(import.meta.url)('../../../build/Release/troupe_spawn.node') as NativeSpawn;
    return native.supported() ? native : undefined;
  } catch {
    return undefined;
  }
}

/** How a thread's posix_spawn spawner started its processes so far (for tests and measurements). */
export const nativeSpawns = { inline: 0, onPool: 0 };

/**
 * posix_spawn returns once the child has called exec, and the thread waits until then: 0.13 ms
 * alone, 1 - 5 ms while many processes start at once. A thread holding no other process of ours
 * spawns inline (the pool's round trip would only add to a chain of steps); one that holds others
 * spawns on libuv's pool, so that their exits and output are not held up behind the new one.
 * Side by side (bench, 2-core VM): throughput 435 -> 568 runs/s (faster in 11 of 12 rounds), fanout
 * 311.7 -> 303.3 ms (10 of 12), chain unchanged (74.5 vs 75.9 ms).
 */
function nativeSpawnerOf(native: NativeSpawn): Spawner {
  const resolved = new Map<string, string>();
  /** Processes started here and not yet reaped, and spawns under way. */
  let live = 0;
  const spawnOnPool = (file: string, argv: string[], envp: string[], cwd: string, stdoutFd: number, stderrFd: number,
    onExit: (code: number | null, signal: number | null) => void) => new Promise<number>((resolveSpawn, rejectSpawn) => {
    native.spawnAsync(file, argv, envp, cwd, stdoutFd, stderrFd, (error, pid) => (error ? rejectSpawn(error) : resolveSpawn(pid!)), onExit);
  });
  return async (argv, { cwd, env }) => {
    const envp = Object.entries(env).map(([key, value]) => `${key}=${value}`);
    const key = `${env.PATH ?? ''}\u0000${cwd}\u0000${argv[0]}`;
    for (let attempt = 0; ; attempt++) {
      const file = resolved.get(key) ?? lookUp(argv[0], cwd, env.PATH);
      const [stdoutRead, stdoutWrite] = native.pipe();
      const [stderrRead, stderrWrite] = native.pipe();
      let finish!: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => (finish = done));
      const onExit = (code: number | null, signal: number | null) => {
        live--;
        finish({ code, signal: signal === null ? null : signalNames.get(signal) ?? 'SIGKILL' });
      };
      const inline = live === 0;
      live++;
      nativeSpawns[inline ? 'inline' : 'onPool']++;
      let pid: number;
      try {
        pid = inline
          ? native.spawn(file, argv, envp, cwd, stdoutWrite, stderrWrite, onExit)
          : await spawnOnPool(file, argv, envp, cwd, stdoutWrite, stderrWrite, onExit);
      } catch (error) {
        live--;
        native.close(stdoutRead);
        native.close(stderrRead);
        // A program found earlier may have moved: look it up again once.
        if (resolved.delete(key) && attempt === 0) continue;
        throw error;
      } finally {
        native.close(stdoutWrite);
        native.close(stderrWrite);
      }
      resolved.set(key, file);
      return { pid, stdout: pipeStream(native, stdoutRead), stderr: pipeStream(native, stderrRead), exited };
    }
  };
}

/** A pipe read by the addon from this thread's event loop, as the events of a Readable. */
function pipeStream(native: NativeSpawn, fd: number): OutputStream {
  const stream = new EventEmitter();
  native.readPipe(fd, (chunk) => {
    if (chunk) {
      stream.emit('data', chunk);
    } else {
      stream.emit('end');
      stream.emit('close');
    }
  });
  return stream;
}

/** Where execvp would find `command` on `path`; relative entries count from the step's directory. */
function lookUp(command: string, cwd: string, path = '/usr/local/bin:/usr/bin:/bin'): string {
  if (command.includes('/')) return command;
  for (const dir of path.split(':')) {
    const candidate = join(isAbsolute(dir) ? dir : join(cwd, dir), command);
    try {
      accessSync(candidate, fsConstants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  throw Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT' });
}

const native = loadNative();

/** The posix_spawn spawner, when the addon is built and the kernel can watch processes (pidfd). */
export const nativeSpawner: Spawner | undefined = native ? nativeSpawnerOf(native) : undefined;

/** What steps start with: TROUPE_SPAWN=child_process forces the fallback. */
export const spawnMethod: SpawnMode =
  nativeSpawner && process.env.TROUPE_SPAWN !== 'child_process' ? 'posix_spawn' : 'child_process';

export const spawner: Spawner = spawnMethod === 'posix_spawn' ? nativeSpawner! : nodeSpawner;

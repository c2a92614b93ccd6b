// Runs a step as a process in its own process group, streaming stdout/stderr to the log files.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { closeSync, openSync, writeSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { StepResult } from '../../core/index.ts';
import type { ControlMessage, WorkerTask } from '../protocol.ts';
import { createMasker } from '../masking.ts';

const DEFAULT_SHELL = ['sh'];

/** Process groups of the steps running here, so that a host losing its parent can stop them. */
export const runningGroups = new Set<number>();

/** stdout and stderr wait at most this long after exit for a background child to close them. */
const PIPE_GRACE_MS = 1000;

export async function runShell(task: WorkerTask): Promise<StepResult> {
  const argv = await commandLine(task);
  const direct = !task.captureOutput && task.secrets.length === 0;
  // Synchronous opens cost microseconds and block only this worker thread; the promise
  // versions cost a thread-pool round trip each, on every step.
  const out = openSync(task.stdoutPath, 'a');
  const err = openSync(task.stderrPath, 'a');
  try {
    return await execute(task, argv, direct, out, err);
  } finally {
    closeSync(out);
    closeSync(err);
  }
}

async function commandLine(task: WorkerTask): Promise<string[]> {
  const shell = task.shell ?? DEFAULT_SHELL;
  if (task.script === undefined) return [...shell, '-c', task.command ?? ''];
  await writeFile(task.scriptPath, task.script, { mode: 0o755 });
  if (task.command !== undefined) return [...shell, '-c', `${task.command} ${quote(task.scriptPath)}`];
  // A shebang chooses the interpreter unless the step or DAG set a shell.
  if (task.script.startsWith('#!') && task.shell === undefined) return [task.scriptPath];
  return [...shell, task.scriptPath];
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function execute(task: WorkerTask, argv: string[], direct: boolean, out: number, err: number): Promise<StepResult> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(argv[0], argv.slice(1), {
        cwd: task.workingDir,
        env: task.env,
        detached: true, // its own process group: a stop reaches every process the step started
        stdio: direct ? ['ignore', out, err] : ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      resolve({ kind: 'error', code: 'spawn_failed', message: (error as Error).message });
      return;
    }
    let stopping = false;
    let killTimer: NodeJS.Timeout | undefined;
    const onControl = (message: ControlMessage) => {
      if (message.type !== 'stop' || child.pid === undefined) return;
      stopping = true;
      signalGroup(child.pid, message.signal);
      killTimer ??= setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), message.cleanupMs);
    };
    task.port.on('message', onControl);
    if (child.pid !== undefined) {
      runningGroups.add(child.pid);
      task.onSpawn?.(child.pid);
    }

    const captured = direct ? undefined : pipeOutputs(child, task, out, err);
    child.once('error', (error) => {
      // A process that never started emits no 'close'.
      if (child.pid !== undefined) return;
      task.port.off('message', onControl);
      resolve({ kind: 'error', code: 'spawn_failed', message: error.message });
    });
    child.once('close', async (code, signal) => {
      task.port.off('message', onControl);
      runningGroups.delete(child.pid!);
      // Processes left in the group after a stop still get SIGKILL when the cleanup time ends.
      if (!stopping && killTimer) clearTimeout(killTimer);
      const output = captured ? await captured.done : undefined;
      const exitCode = code ?? 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0);
      const result: StepResult = { kind: 'ok', exitCode };
      if (signal) {
        result.signal = signal;
        result.error = `signal: ${signal}`;
      } else if (exitCode !== 0) {
        result.error = `exit status ${exitCode}`;
      }
      if (output !== undefined) {
        if (output.overflow) result.error = `output exceeded maxOutputSize (${task.maxOutputSize} bytes)`;
        else if (task.captureOutput) result.output = output.text.trim();
      }
      resolve(result);
    });
  });
}

export function signalGroup(pid: number, signal: string): void {
  try {
    process.kill(-pid, signal as NodeJS.Signals);
  } catch {
    // ESRCH: the group is gone already.
  }
}

interface Captured {
  done: Promise<{ text: string; overflow: boolean }>;
}

/** Pipes stdout/stderr through the masker to the log files, keeping stdout up to maxOutputSize. */
function pipeOutputs(child: ChildProcess, task: WorkerTask, out: number, err: number): Captured {
  const mask = createMasker(task.secrets);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let overflow = false;
  const stdoutDone = forward(child.stdout!, out, mask, (chunk) => {
    if (!task.captureOutput || overflow) return;
    keptBytes += chunk.length;
    if (keptBytes > task.maxOutputSize) overflow = true;
    else kept.push(chunk);
  });
  const stderrDone = forward(child.stderr!, err, mask);
  const done = Promise.all([stdoutDone, stderrDone]).then(() => ({
    text: mask(Buffer.concat(kept).toString('utf8')),
    overflow,
  }));
  child.once('exit', () => {
    // A background child may hold the pipes open; stop reading after a grace period.
    setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, PIPE_GRACE_MS).unref();
  });
  return { done };
}

function forward(stream: Readable, fd: number, mask: (text: string) => string, onChunk?: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve) => {
    let pending = '';
    const write = (text: string) => {
      if (text.length > 0) writeSync(fd, text);
    };
    stream.on('data', (chunk: Buffer) => {
      onChunk?.(chunk);
      // Mask whole lines, so that a secret split across two chunks is still found.
      pending += chunk.toString('utf8');
      const cut = pending.lastIndexOf('\n');
      if (cut >= 0) {
        write(mask(pending.slice(0, cut + 1)));
        pending = pending.slice(cut + 1);
      } else if (pending.length > 64 * 1024) {
        write(mask(pending));
        pending = '';
      }
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      write(mask(pending));
      pending = '';
      resolve();
    };
    stream.once('end', finish);
    stream.once('close', finish);
  });
}

// Runs a step as a process in its own process group, streaming stdout/stderr to the log files.
import { constants as osConstants } from 'node:os';
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import type { StepResult } from '../../core/index.ts';
import type { ControlMessage, WorkerTask } from '../protocol.ts';
import { LineMasker, createMasker, isNixShell, markStage } from '../../core/index.ts';
import { spawner, type OutputStream, type StepProcess } from './spawner.ts';
import { plainCommand, withShellPwd } from './plain-command.ts';
import { shebangLine } from '../shebang.ts';
import { workerLog } from '../../logging/worker-log.ts';
import { Stops } from '../stops.ts';
import { stepLogFailure } from '../step-output.ts';
import { withStderrTail } from '../stderr-tail.ts';

const DEFAULT_SHELL = ['sh'];

/** Process groups of the steps running here, so that a host losing its parent can stop them. */
export const runningGroups = new Set<number>();

/**
 * After the step's process exits, its pipes get this long to close. A background child that holds
 * them keeps its output flowing to the log, but the step is over (as when the shell exits in Dagu).
 */
const PIPE_GRACE_MS = 100;

export async function runShell(task: WorkerTask): Promise<StepResult> {
  // Stop messages are heard from the start: one that comes while the script is written or while
  // the process starts (which may take a few ms on libuv's pool, see spawner.ts) is not lost.
  markStage('step.received');
  const stops = new Stops(task.port);
  try {
    if (task.commands !== undefined) return await executeEach(task, task.commands, stops);
    return await execute(task, await commandLine(task), stops);
  } finally {
    stops.detach();
    // The script lives as long as its step: what it holds is nobody's to read afterwards.
    if (task.script !== undefined) await rm(task.scriptPath, { force: true }).catch(() => {});
    markStage('step.returned');
  }
}

async function commandLine(task: WorkerTask): Promise<Launch> {
  const shell = task.shell ?? DEFAULT_SHELL;
  if (task.script === undefined) return shellLine(task, task.command ?? '');
  // Readable by its owner alone, and made anew (a file left by a crash keeps its mode otherwise).
  await rm(task.scriptPath, { force: true });
  try {
    await writeFile(task.scriptPath, task.script, { mode: 0o700, flag: 'wx' });
  } catch (error) {
    // A full disk: the step fails naming the file (the part written goes with the step's end).
    throw new Error(`cannot write the step's script ${task.scriptPath}: ${(error as Error).message}`);
  }
  if (task.command !== undefined) return { argv: [...shell, commandFlag(shell), `${task.command} ${quote(task.scriptPath)}`] };
  // A shebang chooses the interpreter unless the step set a shell (the plan leaves the DAG's out).
  // One named by a path is the kernel's to start; a bare name (`#!env sh`, `#!python3`), which
  // the kernel would not find, is looked up on PATH, as Dagu does.
  const shebang = shebangLine(task);
  if (shebang !== undefined) {
    const interpreter = shebang.split(/[ \t]+/).filter(Boolean);
    return { argv: interpreter.length > 0 && !interpreter[0].includes('/') ? [...interpreter, task.scriptPath] : [task.scriptPath] };
  }
  // nix-shell reads a file argument as a Nix expression: the script runs as its command.
  return { argv: isNixShell(shell) ? [...shell, '--run', quote(task.scriptPath)] : [...shell, task.scriptPath] };
}

/** nix-shell takes its command with --run (the step's packages are in its words: definition/nix-shell.ts); every other shell with -c. */
function commandFlag(shell: readonly string[]): string {
  return isNixShell(shell) ? '--run' : '-c';
}

/**
 * A list of command lines: each runs through the shell as its own process (no shell state carries
 * over), in order, until one fails; the step fails naming it. The captured output is the stdout
 * of the commands that ran.
 */
async function executeEach(task: WorkerTask, commands: readonly string[], stops: Stops): Promise<StepResult> {
  const outputs: string[] = [];
  let last: StepResult = { kind: 'ok', exitCode: 0 };
  for (const [index, command] of commands.entries()) {
    last = await execute({ ...task, command }, shellLine(task, command), stops);
    if (last.kind === 'ok' && last.output) outputs.push(last.output);
    if (last.kind !== 'ok' || last.exitCode !== 0 || last.error !== undefined) {
      const reason = last.kind === 'ok' ? last.error ?? `exit status ${last.exitCode}` : last.message;
      const error = `command ${index + 1} of ${commands.length} failed (${command}): ${reason}`;
      return last.kind === 'ok' ? { ...last, error, ...(task.captureOutput ? { output: outputs.join('\n') } : {}) } : { ...last, message: error };
    }
  }
  return task.captureOutput ? { ...last, output: outputs.join('\n') } : last;
}

/** A process to start: `argv`, or first `plain`, the same command line started without the shell. */
interface Launch {
  argv: string[];
  plain?: string[];
}

/** `command` through the step's shell; a plain line run by the default shell may start without it (plain-command.ts). */
function shellLine(task: WorkerTask, command: string): Launch {
  const shell = task.shell ?? DEFAULT_SHELL;
  const argv = [...shell, commandFlag(shell), command];
  return task.shell === undefined ? { argv, plain: plainCommand(command) } : { argv };
}

/** Starts `plain` when there is one, and when it cannot start, `argv`: the shell then says why. */
async function start(task: WorkerTask, launch: Launch): Promise<StepProcess> {
  const { argv, plain } = launch;
  if (plain) {
    try {
      return await spawner(plain, { cwd: task.workingDir, env: withShellPwd(task.env, task.workingDir) });
    } catch {
      // Not found, not executable, not a program: the shell's own answer follows.
    }
  }
  try {
    return await spawner(argv, { cwd: task.workingDir, env: task.env });
  } catch (error) {
    // A working directory that does not exist yet is made, as Dagu makes it (checked only on a
    // failure: a step whose directory exists pays nothing for it); a spawn failure with it there
    // is the shell's to tell.
    if (existsSync(task.workingDir)) throw error;
    try {
      await mkdir(task.workingDir, { recursive: true });
    } catch (reason) {
      throw new Error(`cannot make the step's working directory ${task.workingDir}: ${(reason as Error).message}`);
    }
    return start(task, launch);
  }
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

async function execute(task: WorkerTask, launch: Launch, stops: Stops): Promise<StepResult> {
  if (stops.requested) return { kind: 'error', code: 'stopped', message: 'stopped before its process started' };
  let child: StepProcess;
  try {
    child = await start(task, launch);
  } catch (error) {
    return { kind: 'error', code: 'spawn_failed', message: (error as Error).message };
  }
  const pid = child.pid;
  markStage('process.spawned');
  runningGroups.add(pid);
  task.onSpawn?.(pid);
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;
  // A stop that came while the process was starting is applied now.
  stops.handle((message) => {
    stopping = true;
    signalGroup(pid, message.signal);
    killTimer ??= setTimeout(() => signalGroup(pid, 'SIGKILL'), message.cleanupMs);
  });
  const output = forwardOutputs(child, task);
  const { code, signal } = await child.exited;
  markStage('process.exited');
  stops.detach();
  runningGroups.delete(pid);
  task.onExit?.(pid);
  // Processes left in the group after a stop still get SIGKILL when the cleanup time ends.
  if (!stopping && killTimer) clearTimeout(killTimer);
  const { text, overflow, logFailure } = await output.settled(PIPE_GRACE_MS);
  const exitCode = code ?? 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0);
  const result: StepResult = { kind: 'ok', exitCode };
  // A failure's error ends with its stderr's last bytes, as Dagu's does (a stop's too: a stopped
  // step's error is its own, never wrapped, but the tail is there in Dagu as well).
  if (signal) {
    result.signal = signal;
    result.error = output.withStderrTail(`signal: ${signal}`);
  } else if (exitCode !== 0) {
    result.error = output.withStderrTail(`exit status ${exitCode}`);
  }
  if (overflow) result.error = `output exceeded maxOutputSize (${task.maxOutputSize} bytes)`;
  else if (task.captureOutput) result.output = text.trim();
  // Output that was lost is a failure of the step, whatever its exit code: it never passes as a success.
  if (logFailure) result.error = result.error ? `${result.error}; ${logFailure}` : logFailure;
  return result;
}

export function signalGroup(pid: number, signal: string): void {
  try {
    process.kill(-pid, signal as NodeJS.Signals);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/** A log file created on the first bytes written to it. */
class LazyLog {
  private fd: number | undefined;
  /** Why output was lost: the first write that failed (a full disk); nothing is written after it. */
  failure: string | undefined;
  /** Bytes this execution appended (the stderr tail of a failure is read back from them). */
  written = 0;

  constructor(readonly path: string | undefined) {}

  write(data: string | Buffer): void {
    if (data.length === 0 || this.failure !== undefined || this.path === undefined) return;
    try {
      this.fd ??= openCreatingDir(this.path);
      // A disk filling up ends a write short without an error: the rest is written again, and the
      // write that finds no room at all throws.
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      for (let offset = 0; offset < bytes.length;) offset += writeSync(this.fd, bytes, offset);
      this.written += bytes.length;
    } catch (error) {
      // The step goes on, and fails as it ends; its output is lost, and the server's log says why.
      this.failure = stepLogFailure(this.path, error);
      workerLog('error', { path: this.path, error: (error as Error).message }, 'cannot write a step log');
    }
  }

  /**
   * The file exists, empty, though nothing was written to it: a step's stdout log, as Dagu's.
   * One open and close, for a silent step alone (one that wrote has it open already).
   */
  create(): void {
    if (this.fd !== undefined || this.failure !== undefined || this.path === undefined) return;
    try {
      this.fd = openCreatingDir(this.path);
    } catch (error) {
      this.failure = stepLogFailure(this.path, error);
      workerLog('error', { path: this.path, error: (error as Error).message }, 'cannot write a step log');
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Opens for appending; a missing folder (a definition's output file in a new place) is made. */
function openCreatingDir(path: string): number {
  try {
    return openSync(path, 'a', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return openSync(path, 'a', 0o600);
  }
}

/** The step's log file and, when its definition names one (`stdout`/`stderr`), a copy. */
class LogTargets {
  private readonly logs: LazyLog[];
  /** The step's own log file (not the definition's copy). */
  readonly main: LazyLog;

  constructor(path: string | undefined, copy: string | undefined) {
    this.main = new LazyLog(path);
    this.logs = [this.main, new LazyLog(copy)].filter((log) => log.path !== undefined);
  }

  write(data: string | Buffer): void {
    for (const log of this.logs) log.write(data);
  }

  close(): void {
    for (const log of this.logs) log.close();
  }

  get failure(): string | undefined {
    return this.logs.find((log) => log.failure !== undefined)?.failure;
  }
}

export interface Outputs {
  /** Waits for both pipes to close, at most `graceMs`; stdout as captured so far (masked), and why output was lost, if it was. */
  settled(graceMs: number): Promise<{ text: string; overflow: boolean; logFailure?: string }>;
  /** `error` with the end of what this execution wrote to its stderr log (read only when called: for a failure). */
  withStderrTail(error: string): string;
}

/** Forwards stdout/stderr through the masker to the log files, keeping stdout up to maxOutputSize. */
export function forwardOutputs(child: Pick<StepProcess, 'stdout' | 'stderr'>, task: WorkerTask): Outputs {
  const mask = task.secrets.length > 0 ? createMasker(task.secrets) : undefined;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let overflow = false;
  const keep = (chunk: Buffer) => {
    if (overflow) return;
    keptBytes += chunk.length;
    if (keptBytes > task.maxOutputSize) overflow = true;
    else kept.push(chunk);
  };
  const logs = [new LogTargets(task.stdoutPath, task.stdoutCopy), new LogTargets(task.stderrPath, task.stderrCopy)];
  const done = Promise.all([
    forward(child.stdout, logs[0], mask, task.captureOutput ? keep : undefined, true),
    forward(child.stderr, logs[1], mask),
  ]);
  return {
    async settled(graceMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      const text = Buffer.concat(kept).toString('utf8');
      const logFailure = logs[0].failure ?? logs[1].failure;
      return { text: mask ? mask(text) : text, overflow, ...(logFailure ? { logFailure } : {}) };
    },
    withStderrTail: (error) => withStderrTail(error, logs[1].main.path, logs[1].main.written),
  };
}

/** `create`: the step's log file exists once the stream ends, though nothing came (a stdout log, as Dagu's). */
function forward(stream: OutputStream, log: LogTargets, mask: ((text: string) => string) | undefined, onChunk?: (chunk: Buffer) => void, create = false): Promise<void> {
  return new Promise((resolve) => {
    const masker = mask ? new LineMasker(mask) : undefined;
    stream.on('data', (chunk: Buffer) => {
      onChunk?.(chunk);
      if (!masker) {
        log.write(chunk);
        return;
      }
      const ready = masker.push(chunk.toString('utf8'));
      if (ready !== '') log.write(ready);
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (masker) log.write(masker.end());
      if (create) log.main.create();
      log.close();
      resolve();
    };
    stream.once('end', finish);
    stream.once('close', finish);
  });
}

// The ssh executor (definition format: ssh settings): runs the step's command, commands or script on a
// remote host through ssh2, its output streamed to the step's logs as a local step's is. A stop
// sends its signal to the remote command's process group (through the watcher of remote-program.ts),
// then SIGKILL after the cleanup time, when the connection is closed too.
import { constants as osConstants } from 'node:os';
import type { ClientChannel } from 'ssh2';
import { createMasker, type StepResult } from '../../core/index.ts';
import type { ControlMessage, WorkerTask } from '../protocol.ts';
import { forwardOutputs } from '../shell/shell.executor.ts';
import { remoteProgram, stopLine } from './remote-program.ts';
import { connect } from './ssh-connection.ts';
import { sshSettings } from './ssh-settings.ts';
import { appendToLogs } from '../step-output.ts';
import { Stops } from '../stops.ts';

/** After the exit status, the output streams get this long to close (as a local step's pipes do). */
const STREAM_GRACE_MS = 100;
/** How long after SIGKILL the remote side has to report the end before the connection is closed. */
const KILL_GRACE_MS = 2_000;

export async function runSsh(task: WorkerTask): Promise<StepResult> {
  const stops = new Stops(task.port);
  try {
    return await run(task, stops);
  } finally {
    stops.detach();
  }
}

async function run(task: WorkerTask, stops: Stops): Promise<StepResult> {
  const resolved = sshSettings(task.executor.config, task.services?.ssh, task.workingDir);
  if (resolved.kind === 'invalid') return failed(task, resolved.message);
  const { settings } = resolved;
  // A password written in the definition is masked like a secret, should the remote side echo it.
  const masked: WorkerTask = settings.password === undefined ? task : { ...task, secrets: [...task.secrets, settings.password] };
  const pending = connect(settings);
  stops.handle(() => pending.cancel());
  const connection = await pending.connection;
  if (connection.kind === 'cancelled') return stoppedResult(stops.first?.signal);
  if (connection.kind === 'failed') return failed(masked, connection.message);
  const { client } = connection;
  let connectionError: string | undefined;
  client.on('error', (error) => (connectionError ??= error.message));
  try {
    const program = remoteProgram(task, process.env);
    const channel = await new Promise<ClientChannel | Error>((resolve) => {
      try {
        client.exec(program.command, (error, opened) => resolve(error ?? opened));
      } catch (error) {
        // ssh2 throws when the connection ended meanwhile.
        resolve(error as Error);
      }
    });
    if (channel instanceof Error) {
      // A stop while the session opened destroys the connection, which fails the exec.
      if (stops.first) return stoppedResult(stops.first.signal);
      return failed(masked, `ssh ${settings.user}@${settings.host}:${settings.port}: cannot start the remote command: ${connectionError ?? channel.message}`);
    }
    return await execute(masked, channel, program.stdin, stops, () => client.end(), () => connectionError);
  } finally {
    client.end();
  }
}

interface Exit {
  code: number | null;
  signal?: string;
}

async function execute(task: WorkerTask, channel: ClientChannel, stdin: string, stops: Stops, disconnect: () => void, connectionError: () => string | undefined): Promise<StepResult> {
  let exit: Exit | undefined;
  channel.on('exit', (code: number | null, signal?: string) => (exit = { code, ...(signal !== undefined ? { signal } : {}) }));
  const closed = new Promise<void>((resolve) => channel.once('close', () => resolve()));
  const output = forwardOutputs({ stdout: channel, stderr: channel.stderr }, task);
  // Stdin stays open: stop signals are sent on it later (remote-program.ts).
  channel.write(stdin);
  let stopSignal: string | undefined;
  let killed = false;
  let killTimer: NodeJS.Timeout | undefined;
  let hangUpTimer: NodeJS.Timeout | undefined;
  stops.handle((message) => {
    stopSignal ??= message.signal;
    sendSignal(channel, message.signal);
    killTimer ??= setTimeout(() => {
      killed = true;
      sendSignal(channel, 'SIGKILL');
      // A host that does not act on it (the watcher gone, the host unreachable) is left: closing
      // the connection makes a live watcher hang up the step.
      hangUpTimer = setTimeout(disconnect, KILL_GRACE_MS);
    }, message.cleanupMs);
  });
  await closed;
  clearTimeout(killTimer);
  clearTimeout(hangUpTimer);
  const { text, overflow } = await output.settled(STREAM_GRACE_MS);
  if (exit === undefined && stopSignal === undefined) {
    const reason = connectionError();
    return failed(task, `ssh: the connection closed before the remote command reported its exit status${reason ? `: ${reason}` : ''}`);
  }
  const result = exitResult(exit, killed ? 'SIGKILL' : stopSignal);
  if (overflow) result.error = `output exceeded maxOutputSize (${task.maxOutputSize} bytes)`;
  else if (task.captureOutput) result.output = text.trim();
  return result;
}

/** As the shell executor records a process's end: a signal is 128 + its number. */
function exitResult(exit: Exit | undefined, stopSignal: string | undefined): StepResult & { kind: 'ok' } {
  if (exit?.code !== undefined && exit.code !== null) {
    return exit.code === 0 ? { kind: 'ok', exitCode: 0 } : { kind: 'ok', exitCode: exit.code, error: `exit status ${exit.code}` };
  }
  return stoppedResult(exit?.signal ?? stopSignal);
}

function stoppedResult(signal = 'SIGTERM'): StepResult & { kind: 'ok' } {
  return { kind: 'ok', exitCode: 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0), signal, error: `signal: ${signal}` };
}

function sendSignal(channel: ClientChannel, signal: string): void {
  const line = stopLine(signal);
  if (line !== undefined && channel.writable) channel.write(line);
}

/** The failure's message goes to the step's stderr log and becomes the step's error. */
async function failed(task: WorkerTask, message: string): Promise<StepResult> {
  const text = mask(task, message);
  await appendToLogs([task.stderrPath, task.stderrCopy], `${text}\n`);
  return { kind: 'ok', exitCode: 1, error: text };
}

function mask(task: WorkerTask, text: string): string {
  return task.secrets.length > 0 ? createMasker(task.secrets)(text) : text;
}


// One command run by exec in a running container (one named by containerName, or the DAG-level
// container). A stop signals the exec's process: the API has no call for it, so its host process
// id is signalled, which works when the daemon runs on this machine (a unix socket).
import type Docker from 'dockerode';
import { demultiplex, docker, daemonIsLocal, daemonMessage, deadline } from './docker.ts';
import type { StepOutput } from './step-output.ts';
import type { Stops } from '../stops.ts';
import type { Outcome } from './outcome.ts';

/** How often the exec is inspected while its stream stays open (a background child may hold it). */
const POLL_MS = 200;
/** After the exec's process exits, its stream gets this long to deliver the last output. */
const STREAM_GRACE_MS = 500;

export interface ExecSettings {
  User?: string;
  WorkingDir?: string;
  Env: string[];
}

/** The exit code of an exec whose command the runtime could not invoke. */
const CANNOT_INVOKE = 126;

export async function execInContainer(containerId: string, argv: string[], settings: ExecSettings, output: StepOutput, stops: Stops): Promise<Outcome> {
  if (stops.requested) return { kind: 'stopped', signal: stops.first!.signal };
  let exec: Docker.Exec;
  let stream: NodeJS.ReadWriteStream;
  try {
    exec = await docker().getContainer(containerId).exec({
      Cmd: argv, AttachStdout: true, AttachStderr: true, AttachStdin: false, Tty: false, Env: settings.Env,
      ...(settings.User ? { User: settings.User } : {}),
      ...(settings.WorkingDir ? { WorkingDir: settings.WorkingDir } : {}),
      ...deadline(),
    });
    stream = await exec.start({ hijack: true, stdin: false, ...deadline() }) as NodeJS.ReadWriteStream;
  } catch (error) {
    return { kind: 'failed', message: `${daemonMessage(error)}${await stateOf(containerId)}` };
  }
  let streamEnded = false;
  const ended = new Promise<void>((resolve) => {
    const done = () => {
      streamEnded = true;
      resolve();
    };
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', done);
  });
  demultiplex(stream, output.stdout, output.stderr);
  let stoppedBy: string | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let abandoned = false;
  let abandon: () => void = () => {};
  const given = new Promise<void>((resolve) => (abandon = () => {
    abandoned = true;
    resolve();
  }));
  stops.handle((message) => {
    if (stoppedBy !== undefined) return;
    stoppedBy = message.signal;
    void signalExec(exec, message.signal);
    // After the cleanup time the process gets SIGKILL; an exec still running then (a daemon on
    // another machine, whose processes cannot be signalled from here) is left, and the step ends.
    killTimer = setTimeout(() => {
      void signalExec(exec, 'SIGKILL');
      killTimer = setTimeout(abandon, STREAM_GRACE_MS);
    }, message.cleanupMs);
  });
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise((resolve) => (timer = setTimeout(resolve, POLL_MS)));
      await Promise.race(streamEnded ? [given, tick] : [ended, given, tick]);
      clearTimeout(timer);
      if (abandoned) return { kind: 'stopped', signal: stoppedBy ?? 'SIGKILL' };
      const info = await exec.inspect(deadline());
      if (info.Running) continue;
      if (!streamEnded) {
        await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, STREAM_GRACE_MS)))]);
        clearTimeout(timer);
      }
      if (stoppedBy !== undefined) return { kind: 'stopped', signal: stoppedBy };
      // 126: the runtime could not start the command, as when the container stopped between the
      // check that it runs and the exec (its own command failed): its state says why.
      if (info.ExitCode === CANNOT_INVOKE) {
        const state = await stateOf(containerId);
        if (state !== '') return { kind: 'failed', message: `the step's command could not run: container ${containerId.slice(0, 12)} is not running${state}` };
      }
      return { kind: 'exited', exitCode: info.ExitCode ?? 1 };
    }
  } catch (error) {
    return { kind: 'failed', message: daemonMessage(error) };
  } finally {
    stops.handle(undefined);
    clearTimeout(killTimer);
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
}

async function signalExec(exec: Docker.Exec, signal: string): Promise<void> {
  if (!daemonIsLocal()) return;
  try {
    const { Pid, Running } = await exec.inspect(deadline());
    if (!Running || Pid <= 0) return;
    // The exec's process leads its own process group when the runtime made it a session leader:
    // the group is signalled then, so that the command's children (sh -c 'a; b') go too.
    try {
      process.kill(-Pid, signal as NodeJS.Signals);
    } catch {
      process.kill(Pid, signal as NodeJS.Signals);
    }
  } catch {
    // The process has ended already.
  }
}

/**
 * The state of a container an exec could not reach, as words to add to the daemon's message: a
 * container that was running when it was checked may have exited since (its command failed).
 */
async function stateOf(containerId: string): Promise<string> {
  try {
    const { State } = await docker().getContainer(containerId).inspect(deadline());
    return State.Running ? '' : ` (status ${State.Status}, exit code ${State.ExitCode})`;
  } catch {
    return '';
  }
}

// Shell steps (type shell or command, the default) and their step host, as a pool worker thread
// runs them and as the troupe command runs them on its own thread (inline.ts). With the posix_spawn
// addon the steps start here, and their process groups are named to the step host, which stops
// them if this process crashes; without it they are relayed to the host, which forks them from a
// small process (see step-host.ts).
import { HostClient } from './host-client.ts';
import type { ExecutorFn, SpawnMode } from './protocol.ts';
import { runShell } from './shell/shell.executor.ts';

export interface ShellSteps {
  run: ExecutorFn;
  /** Lets the step host go (it ends once this process no longer talks to it). */
  close(): void;
}

/** `prepareHost`: the host starts now, overlapping what precedes the first step, instead of following it. */
export function shellSteps(options: { spawnMode: SpawnMode; stepRegistryDir?: string; prepareHost?: boolean }): ShellSteps {
  const host = new HostClient(options.spawnMode === 'child_process', options.stepRegistryDir);
  if (options.prepareHost) host.forked();
  const relayToHost: ExecutorFn = ({ port, ...task }) => host.run(task, port);
  // A step starts once its host is forked, not once the host has loaded: the watch list is the host's
  // descriptor from the fork on, and a host that finds this process gone when it has loaded (its
  // channel closed already) stops every group listed there (step-host.ts). Waiting for the host's
  // `ready` would put a Node process's start-up before the first step.
  const runHere: ExecutorFn = async (task) => {
    host.forked();
    return runShell({ ...task, onSpawn: (pid) => host.watch(pid, task), onExit: (pid) => host.unwatch(pid) });
  };
  return { run: options.spawnMode === 'posix_spawn' ? runHere : relayToHost, close: () => host.close() };
}

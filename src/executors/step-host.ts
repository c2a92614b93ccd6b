// The step host: a slim child process of one pool worker. It has two roles.
// - With child_process (no posix_spawn addon) it runs that worker's shell steps: a fork copies the
//   page tables of the process that forks, so spawning from this ~40 MB process costs a fraction of
//   spawning from the server (measured: 1.3 ms at 44 MB RSS, 3-4 ms at 100 MB, 6-7 ms at 160 MB).
// - With posix_spawn the worker starts its steps itself and only names their process groups here
//   (`watch`/`unwatch`), off the step's path.
// Either way, when the server goes away without stopping its steps (a crash), the host stops every
// group it knows, rather than leave them running as orphans.
// It imports node:* modules and the shell executor only, and must stay that small.
import { EventEmitter } from 'node:events';
import type { ControlMessage, HostReply, HostRequest } from './protocol.ts';
import { runShell, runningGroups, signalGroup } from './shell/shell.executor.ts';

const controls = new Map<number, EventEmitter>();
/** Groups of steps the worker started itself. */
const watched = new Set<number>();

process.on('message', (message: HostRequest) => {
  if (message.type === 'run') {
    const control = new EventEmitter();
    controls.set(message.id, control);
    const onSpawn = (pid: number) => {
      const spawned: HostReply = { type: 'spawned', id: message.id, pid };
      process.send?.(spawned);
    };
    void runShell({ ...message.task, port: control, onSpawn })
      .catch((error: Error) => ({ kind: 'error' as const, code: 'executor_failed', message: error.message }))
      .then((result) => {
        controls.delete(message.id);
        const reply: HostReply = { type: 'result', id: message.id, result };
        process.send?.(reply);
      });
  } else if (message.type === 'stop') {
    const stop: ControlMessage = { type: 'stop', signal: message.signal, cleanupMs: message.cleanupMs };
    controls.get(message.id)?.emit('message', stop);
  } else if (message.type === 'watch') {
    for (const pid of message.ended ?? []) watched.delete(pid);
    watched.add(message.pid);
  } else if (message.type === 'unwatch') {
    for (const pid of message.pids) watched.delete(pid);
  }
});

const ready: HostReply = { type: 'ready' };
process.send?.(ready);

// The server went away without stopping its steps (a crash): stop them rather than orphan them.
process.on('disconnect', () => {
  const groups = [...runningGroups, ...watched];
  for (const pid of groups) signalGroup(pid, 'SIGTERM');
  setTimeout(() => {
    for (const pid of groups) signalGroup(pid, 'SIGKILL');
    process.exit(0);
  }, groups.length > 0 ? 2000 : 0);
});

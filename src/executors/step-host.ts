// The step host: a slim child process of one pool worker. It has two roles.
// - With child_process (no posix_spawn addon) it runs that worker's shell steps: a fork copies the
//   page tables of the process that forks, so spawning from this ~40 MB process costs a fraction of
//   spawning from the server (measured: 1.3 ms at 44 MB RSS, 3-4 ms at 100 MB, 6-7 ms at 160 MB).
// - With posix_spawn the worker starts its steps itself and writes their process groups into the
//   watch list (protocol.ts), a file this host reads only when the server has gone: a step costs
//   the host nothing.
// Either way, when the server goes away without stopping its steps (a crash), the host stops every
// group it knows, rather than leave them running as orphans.
// It imports node:* modules, the shell executor and the step registry only, and must stay that small.
import { EventEmitter } from 'node:events';
import { closeSync, fstatSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { WATCH_LIST_FD, type ControlMessage, type HostReply, type HostRequest } from './protocol.ts';
import { runShell, runningGroups, signalGroup } from './shell/shell.executor.ts';
import { isSameProcess, readGroups } from './step-registry.ts';

const controls = new Map<number, EventEmitter>();
/** The watch list's descriptor, named on the command line; a host that relays steps has none. */
const watchListFd = process.argv[2] === String(WATCH_LIST_FD) ? WATCH_LIST_FD : undefined;
const O_CLOEXEC = 0o2000000;

/**
 * Descriptors the server opened without close-on-exec (LMDB's data file among them) came along
 * with the fork; steps started here must not inherit them. Node's own carry close-on-exec, and so
 * would have been closed by the exec: what lacks it was inherited.
 */
function closeInheritedDescriptors(): void {
  const keep = new Set([0, 1, 2, watchListFd, Number(process.env.NODE_CHANNEL_FD)]);
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    return; // not Linux
  }
  for (const entry of entries) {
    const fd = Number(entry);
    if (keep.has(fd)) continue;
    try {
      const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) closeSync(fd);
    } catch {
      // closed meanwhile (the listing's own descriptor)
    }
  }
}
closeInheritedDescriptors();

/** Groups of steps the worker started itself: the watch list's slots in use (a reused pid is another process's). */
function watched(): number[] {
  if (watchListFd === undefined) return [];
  try {
    const bytes = Buffer.alloc(fstatSync(watchListFd).size);
    readSync(watchListFd, bytes, 0, bytes.length, 0);
    return readGroups(bytes)
      .filter(({ pid, startTime }) => Number.isNaN(startTime) || isSameProcess(pid, startTime))
      .map(({ pid }) => pid);
  } catch (error) {
    console.error('troupe step host: cannot read the watch list:', (error as Error).message);
    return [];
  }
}

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
  }
});

const ready: HostReply = { type: 'ready' };
if (process.connected) process.send?.(ready);

// The server went away without stopping its steps (a crash): stop them rather than orphan them.
// A host still loading when that happens finds its channel closed already.
function serverGone(): void {
  const groups = [...runningGroups, ...watched()];
  for (const pid of groups) signalGroup(pid, 'SIGTERM');
  setTimeout(() => {
    for (const pid of groups) signalGroup(pid, 'SIGKILL');
    process.exit(0);
  }, groups.length > 0 ? 2000 : 0);
}
process.once('disconnect', serverGone);
if (!process.connected) serverGone();

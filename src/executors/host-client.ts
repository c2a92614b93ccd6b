// A worker thread's link to its step host process: forks it on first use, relays tasks and stop
// messages (child_process mode) or names the groups of steps started here (posix_spawn mode).
// A host that dies fails the tasks it ran; the groups named to it are named again to its successor.
import { fork, type ChildProcess } from 'node:child_process';
import type { StepResult, StepTask } from '../core/index.ts';
import type { ControlMessage, ControlPort, HostReply, HostRequest } from './protocol.ts';

/** How long an ended group may stay on the host's list when no other step starts. */
const UNWATCH_DELAY_MS = 50;

const hostFile = new URL(import.meta.url.endsWith('.ts') ? './step-host.ts' : './step-host.js', import.meta.url);

export class HostClient {
  /** `relayMode`: the host runs the steps (child_process); else it only watches their groups. */
  constructor(private readonly relayMode: boolean) {}

  private host: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (result: StepResult) => void>();
  /** Process groups of the steps the host runs, by task id: stopped here if the host dies. */
  private readonly groups = new Map<number, number>();
  /** Groups of steps this worker started itself, named to the host. */
  private readonly watched = new Set<number>();
  /** Ended groups not yet told to the host. */
  private readonly ended: number[] = [];
  private unwatchTimer: NodeJS.Timeout | undefined;
  /** Resolves when the current host has said `ready`. */
  private listening: Promise<void> | undefined;
  private isListening = false;

  run(task: StepTask, port: ControlPort): Promise<StepResult> {
    const id = this.nextId++;
    const onControl = (message: ControlMessage) => {
      this.send({ type: 'stop', id, signal: message.signal, cleanupMs: message.cleanupMs });
    };
    port.on('message', onControl);
    return new Promise<StepResult>((resolve) => {
      this.pending.set(id, resolve);
      this.send({ type: 'run', id, task });
    }).finally(() => port.off('message', onControl));
  }

  /** Resolves once a host listens: a step is started only when a host can watch it. */
  ready(): Promise<void> {
    this.ensureHost();
    return this.listening!;
  }

  /** The host stops this group if the server disappears while it runs. Not awaited. */
  watch(pid: number): void {
    this.watched.add(pid);
    const ended = this.ended.length > 0 ? this.ended.splice(0) : undefined;
    this.send(ended ? { type: 'watch', pid, ended } : { type: 'watch', pid });
  }

  /** The group ended: told to the host with the next `watch`, or within UNWATCH_DELAY_MS. */
  unwatch(pid: number): void {
    this.watched.delete(pid);
    this.ended.push(pid);
    this.unwatchTimer ??= setTimeout(() => {
      this.unwatchTimer = undefined;
      if (this.ended.length > 0) this.send({ type: 'unwatch', pids: this.ended.splice(0) });
    }, UNWATCH_DELAY_MS).unref();
  }

  /** Sends once the host listens; messages keep their order. A host that died gets nothing. */
  private send(message: HostRequest): void {
    const host = this.ensureHost();
    const deliver = () => {
      if (host.connected) host.send(message);
    };
    if (this.isListening) deliver();
    else void this.listening!.then(deliver);
  }

  private ensureHost(): ChildProcess {
    if (this.host && this.host.connected) return this.host;
    const host = fork(hostFile, [], {
      // Under tsx (tests, development) the host loads TypeScript the same way.
      execArgv: hostFile.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
      // Steps relayed here start the way the pool was told to start them.
      env: this.relayMode ? { ...process.env, TROUPE_SPAWN: 'child_process' } : process.env,
    });
    host.on('error', () => {}); // a failed send; the host's end shows as 'exit'
    this.isListening = false;
    let listen!: () => void;
    this.listening = new Promise((resolve) => (listen = resolve));
    host.on('message', (reply: HostReply) => {
      if (reply.type === 'ready') {
        this.isListening = true;
        listen();
        return;
      }
      if (reply.type === 'spawned') {
        this.groups.set(reply.id, reply.pid);
        return;
      }
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      this.groups.delete(reply.id);
      resolve?.(reply.result);
    });
    host.once('exit', (code, signal) => {
      if (this.host === host) this.host = undefined;
      listen(); // nobody waits for a host that is gone

      // Steps of a host that died would be orphans: end their groups, fail their tasks.
      for (const pid of this.groups.values()) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      this.groups.clear();
      for (const [id, resolve] of this.pending) {
        this.pending.delete(id);
        resolve({ kind: 'error', code: 'host_exited', message: `the step host exited (${signal ?? code})` });
      }
      // Steps started here keep running: their successor host watches them.
      if (this.watched.size > 0) for (const pid of this.watched) this.send({ type: 'watch', pid });
    });
    this.host = host;
    return host;
  }
}

// A worker thread's link to its step host process: forks it on first use, relays tasks and stop
// messages (child_process mode) or names the groups of steps started here (posix_spawn mode).
// A host that dies fails the tasks it ran; the groups named to it stay named to its successor.
import { fork, type ChildProcess } from 'node:child_process';
import { openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { StepResult, StepTask } from '../core/index.ts';
import { WATCH_LIST_FD, type ControlMessage, type ControlPort, type HostReply, type HostRequest } from './protocol.ts';

const hostFile = new URL(import.meta.url.endsWith('.ts') ? './step-host.ts' : './step-host.js', import.meta.url);

export class HostClient {
  /** `relayMode`: the host runs the steps (child_process); else it only watches their groups. */
  constructor(private readonly relayMode: boolean) {}

  private host: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (result: StepResult) => void>();
  /** Process groups of the steps the host runs, by task id: stopped here if the host dies. */
  private readonly groups = new Map<number, number>();
  /** The watch list (protocol.ts): a step's group is one pwrite here, not a message to wake the host for. */
  private watchList: number | undefined;
  private readonly slots = new Map<number, number>();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private readonly slotBytes = Buffer.alloc(4);
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

  /** The host stops this group if the server disappears while it runs. */
  watch(pid: number): void {
    const slot = this.freeSlots.pop() ?? this.nextSlot++;
    this.slots.set(pid, slot);
    this.writeSlot(slot, pid);
  }

  /** The group ended: its slot is cleared and reused. */
  unwatch(pid: number): void {
    const slot = this.slots.get(pid);
    if (slot === undefined) return;
    this.slots.delete(pid);
    this.writeSlot(slot, 0);
    this.freeSlots.push(slot);
  }

  private writeSlot(slot: number, pid: number): void {
    this.slotBytes.writeInt32LE(pid);
    writeSync(this.openWatchList(), this.slotBytes, 0, 4, slot * 4);
  }

  /** Created once per worker and unlinked at once: only this thread and its hosts hold it. */
  private openWatchList(): number {
    if (this.watchList === undefined) {
      const path = join(tmpdir(), `troupe-watch-${process.pid}-${threadId}-${Date.now()}`);
      this.watchList = openSync(path, 'wx+', 0o600);
      unlinkSync(path);
    }
    return this.watchList;
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
    // With posix_spawn the host is told where its watch list is; a relaying host has none.
    const host = fork(hostFile, this.relayMode ? [] : [String(WATCH_LIST_FD)], {
      // Under tsx (tests, development) the host loads TypeScript the same way.
      execArgv: hostFile.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [],
      // The watch list becomes the host's descriptor WATCH_LIST_FD; a successor gets the same file.
      stdio: ['ignore', 'inherit', 'inherit', 'ipc', ...(this.relayMode ? [] : [this.openWatchList()])],
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
      // Steps started here keep running: a successor reads the same watch list.
      if (this.slots.size > 0) this.ensureHost();
    });
    this.host = host;
    return host;
  }
}

// A worker thread's link to its step host process: forks it on first use, relays tasks and stop
// messages (child_process mode) or names the groups of steps started here (posix_spawn mode).
// A host that dies fails the tasks it ran; the groups named to it stay named to its successor.
// Either way the groups of running steps are in this thread's step registry (step-registry.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { threadId } from 'node:worker_threads';
import type { StepResult, StepTask } from '../core/index.ts';
import { WATCH_LIST_FD, type ControlMessage, type ControlPort, type HostReply, type HostRequest } from './protocol.ts';
import { StepRegistry, stepLabel } from './step-registry.ts';
import { workerLog } from '../logging/worker-log.ts';

const hostFile = new URL(import.meta.url.endsWith('.ts') ? './step-host.ts' : './step-host.js', import.meta.url);

export class HostClient {
  /**
   * `relayMode`: the host runs the steps (child_process); else it only watches their groups.
   * `registryDir`: where the registry is kept for the next server; a temporary file without it.
   */
  constructor(private readonly relayMode: boolean, registryDir?: string) {
    this.registry = new StepRegistry(registryDir, `${process.pid}-${threadId}${registryDir ? '' : `-${Date.now()}`}`, tmpdir());
  }

  private host: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (result: StepResult) => void>();
  /** Process groups of the steps the host runs, by task id: stopped here if the host dies. */
  private readonly groups = new Map<number, number>();
  /** Relayed tasks' labels, by task id, for the registry. */
  private readonly labels = new Map<number, string>();
  /** Also the watch list (protocol.ts): a step's group is one pwrite there, not a message to wake the host for. */
  private readonly registry: StepRegistry;
  /** Resolves when the current host has said `ready`. */
  private listening: Promise<void> | undefined;
  private isListening = false;
  /** Closed: a host that exits is not replaced. */
  private closed = false;

  run(task: StepTask, port: ControlPort): Promise<StepResult> {
    const id = this.nextId++;
    const onControl = (message: ControlMessage) => {
      this.send({ type: 'stop', id, signal: message.signal, cleanupMs: message.cleanupMs });
    };
    port.on('message', onControl);
    this.labels.set(id, stepLabel(task.env));
    return new Promise<StepResult>((resolve) => {
      this.pending.set(id, resolve);
      this.send({ type: 'run', id, task });
    }).finally(() => port.off('message', onControl));
  }

  /**
   * A host is forked (a step is started only when a host can watch it): it watches the groups in
   * the watch list from the fork on, whether it has loaded yet or not.
   */
  forked(): void {
    this.ensureHost();
  }

  /**
   * Lets the host go, once no step runs here: it ends as soon as it sees the channel closed (a host
   * still loading, once it has loaded). This process does not wait for that.
   */
  close(): void {
    this.closed = true;
    const host = this.host;
    if (!host) return;
    if (host.connected) host.disconnect();
    host.unref();
  }

  /** The host stops this group if the server disappears while it runs; the next server, if it still runs then. */
  watch(pid: number, task: StepTask): void {
    this.record(() => this.registry.add(pid, stepLabel(task.env)));
  }

  /** The group ended. */
  unwatch(pid: number): void {
    this.record(() => this.registry.remove(pid));
  }

  /**
   * A registry write that fails (a full disk) leaves the step running, unwatched: were the server
   * to crash meanwhile, the step would go on alone. It is the step's safety net, not the step.
   */
  private record(write: () => void): void {
    try {
      write();
    } catch (error) {
      workerLog('warn', { error: (error as Error).message }, 'cannot record a step\'s process group in the step registry: it is not stopped if the server crashes');
    }
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
      stdio: ['ignore', 'inherit', 'inherit', 'ipc', ...(this.relayMode ? [] : [this.registry.descriptor])],
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
        this.record(() => this.registry.add(reply.pid, this.labels.get(reply.id) ?? ''));
        return;
      }
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      this.labels.delete(reply.id);
      const pid = this.groups.get(reply.id);
      if (pid !== undefined) this.record(() => this.registry.remove(pid));
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
        this.record(() => this.registry.remove(pid));
      }
      this.groups.clear();
      for (const [id, resolve] of this.pending) {
        this.pending.delete(id);
        this.labels.delete(id);
        resolve({ kind: 'error', code: 'host_exited', message: `the step host exited (${signal ?? code})` });
      }
      // Steps started here keep running: a successor reads the same watch list.
      if (!this.closed && !this.relayMode && this.registry.size > 0) this.ensureHost();
    });
    this.host = host;
    return host;
  }
}

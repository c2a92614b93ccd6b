// A worker thread's link to its step host process: forks it on first use, relays tasks and stop
// messages, and fails the tasks of a host that dies (the next task starts a new host).
import { fork, type ChildProcess } from 'node:child_process';
import type { StepResult, StepTask } from '../core/index.ts';
import type { ControlMessage, ControlPort, HostReply, HostRequest } from './protocol.ts';

const hostFile = new URL(import.meta.url.endsWith('.ts') ? './step-host.ts' : './step-host.js', import.meta.url);

export class HostClient {
  private host: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (result: StepResult) => void>();
  /** Process groups of the steps in flight, by task id: stopped here if the host dies. */
  private readonly groups = new Map<number, number>();

  run(task: StepTask, port: ControlPort): Promise<StepResult> {
    const host = this.ensureHost();
    const id = this.nextId++;
    const onControl = (message: ControlMessage) => {
      const stop: HostRequest = { type: 'stop', id, signal: message.signal, cleanupMs: message.cleanupMs };
      this.host?.send(stop);
    };
    port.on('message', onControl);
    return new Promise<StepResult>((resolve) => {
      this.pending.set(id, resolve);
      const request: HostRequest = { type: 'run', id, task };
      host.send(request);
    }).finally(() => port.off('message', onControl));
  }

  private ensureHost(): ChildProcess {
    if (this.host && this.host.connected) return this.host;
    const host = fork(hostFile, [], {
      // Under tsx (tests, development) the host loads TypeScript the same way.
      execArgv: hostFile.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    host.on('message', (reply: HostReply) => {
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
    });
    this.host = host;
    return host;
  }
}

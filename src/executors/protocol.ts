// Messages between the pool (main thread), a worker thread, and the step host process.
import type { StepResult, StepTask } from '../core/index.ts';

export type ControlMessage = { type: 'stop'; signal: string; cleanupMs: number };

/** Where an executor hears control messages: a MessagePort in a worker, an emitter in the host. */
export interface ControlPort {
  on(event: 'message', listener: (message: ControlMessage) => void): unknown;
  off(event: 'message', listener: (message: ControlMessage) => void): unknown;
}

export type WorkerTask = StepTask & {
  port: ControlPort;
  /** Told the step's process id (its group) once it is spawned. */
  onSpawn?: (pid: number) => void;
  /** Told when that process has exited. */
  onExit?: (pid: number) => void;
};

export type ExecutorFn = (task: WorkerTask) => Promise<StepResult>;

/** How a worker starts shell steps: itself with posix_spawn, or through its host with child_process. */
export type SpawnMode = 'posix_spawn' | 'child_process';

/** Worker thread -> step host (child_process mode): run a step, stop one. */
export type HostRequest =
  | { type: 'run'; id: number; task: StepTask }
  | { type: 'stop'; id: number; signal: string; cleanupMs: number };

/**
 * The descriptor, in the step host, of the watch list: the worker thread's step registry
 * (step-registry.ts), into which it writes the process groups of the steps it started. The host,
 * given this number as its argument, reads it only when the server disappears.
 */
export const WATCH_LIST_FD = 4;

/** Step host -> worker thread. `ready` comes first: nothing is sent to a host before it listens. */
export type HostReply =
  | { type: 'ready' }
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'result'; id: number; result: StepResult };

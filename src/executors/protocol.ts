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
};

export type ExecutorFn = (task: WorkerTask) => Promise<StepResult>;

/** Worker thread -> step host. */
export type HostRequest =
  | { type: 'run'; id: number; task: StepTask }
  | { type: 'stop'; id: number; signal: string; cleanupMs: number };

/** Step host -> worker thread. */
export type HostReply =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'result'; id: number; result: StepResult };

// Messages between the pool (main thread) and a step running in a worker thread.
import type { MessagePort } from 'node:worker_threads';
import type { StepTask } from '../core/index.ts';

export type ControlMessage = { type: 'stop'; signal: string; cleanupMs: number };

export type WorkerTask = StepTask & { port: MessagePort };

export type ExecutorFn = (task: WorkerTask) => Promise<import('../core/index.ts').StepResult>;

// StepDispatcher for the troupe command's own engine (no server on the home): shell steps run on
// the command's thread, as a pool worker would run them, so that a one-step `troupe start` does
// not start a thread (an isolate that loads its modules) before its step, nor wait for the
// thread's end after it. Steps of the other types go to a pool, started with the first of them.
import { EventEmitter } from 'node:events';
import { markStage, type StepDispatcher, type StepHandle, type StepResult, type StepTask } from '../core/index.ts';
import { logDescriptor, logIsText } from '../logging/index.ts';
import { setWorkerLogDescriptor } from '../logging/worker-log.ts';
import type { PiscinaDispatcher, PoolOptions } from './pool.ts';
import type { ControlMessage } from './protocol.ts';
import { shellSteps, type ShellSteps } from './shell-steps.ts';

export class InlineDispatcher implements StepDispatcher {
  private readonly shell: ShellSteps;
  private pool: Promise<PiscinaDispatcher> | undefined;

  constructor(private readonly options: PoolOptions) {
    // The executors' lines go where the command's log goes (stderr), as a pool worker's would.
    setWorkerLogDescriptor(logDescriptor(), logIsText());
    this.shell = shellSteps(options);
  }

  dispatch(task: StepTask): StepHandle {
    if (task.executor.type !== 'shell' && task.executor.type !== 'command') return this.pooled(task);
    markStage('step.dispatched');
    const port = new EventEmitter();
    const result: Promise<StepResult> = this.shell.run({ ...task, port })
      .catch((error: Error) => ({ kind: 'error' as const, code: 'executor_failed', message: error.message }))
      .finally(() => markStage('step.result'));
    return {
      result,
      stop(signal: string, cleanupMs: number) {
        const message: ControlMessage = { type: 'stop', signal, cleanupMs };
        port.emit('message', message);
      },
    };
  }

  /** A step of another type, on a pool thread (loaded, and started, with the first such step). */
  private pooled(task: StepTask): StepHandle {
    this.pool ??= import('./pool.ts').then(({ PiscinaDispatcher }) => new PiscinaDispatcher({ ...this.options, minThreads: 0, prepareHost: false }));
    const handle = this.pool.then((pool) => pool.dispatch(task));
    return {
      result: handle.then((pooled) => pooled.result, (error: Error) => ({ kind: 'error' as const, code: 'pool_error', message: error.message })),
      stop(signal: string, cleanupMs: number) {
        void handle.then((pooled) => pooled.stop(signal, cleanupMs), () => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.pool) await (await this.pool).close();
    this.shell.close();
  }
}

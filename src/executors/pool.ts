// StepDispatcher on a Piscina pool. One thread holds many steps at once: steps mostly wait on
// processes, so maxActiveSteps is never capped by the number of threads. A running task is never
// aborted (that would end its thread and every other step on it); it is stopped by a message.
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { markStage, type StepDispatcher, type StepHandle, type StepResult, type StepTask } from '../core/index.ts';
import type { ControlMessage, SpawnMode } from './protocol.ts';
import { logDescriptor, logIsText } from '../logging/index.ts';

export interface PoolOptions {
  minThreads?: number;
  /** The service's `maxThreads` setting. */
  maxThreads: number;
  concurrentTasksPerWorker?: number;
  /** How shell steps start (the service picks posix_spawn when the addon is built: `spawnMethod`, shell/spawner.ts). */
  spawnMode: SpawnMode;
  /**
   * Where the process groups of running steps are recorded, for the next server on the same home
   * to end those a crash left running (orphans.ts); nowhere without it.
   */
  stepRegistryDir?: string;
  /**
   * Each thread starts its step host as it starts, not at its first shell step: with minThreads,
   * a command that is about to run a DAG has both ready while it records the run.
   */
  prepareHost?: boolean;
}

const workerFile = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

export class PiscinaDispatcher implements StepDispatcher {
  /** Set once Piscina has loaded: it loads with the pool, not with the module (a verb that runs no step never loads it). */
  private pool: Piscina | undefined;
  private readonly loading: Promise<Piscina>;

  constructor(options: PoolOptions) {
    this.loading = import('piscina').then(({ Piscina }) => (this.pool = new Piscina({
      filename: workerFile.href,
      // Threads start with the first steps and then stay: a server that has run nothing holds none
      // (about 10 MB each), and a busy one never pays a thread's start-up twice.
      minThreads: options.minThreads ?? 0,
      maxThreads: options.maxThreads,
      concurrentTasksPerWorker: options.concurrentTasksPerWorker ?? 512,
      idleTimeout: 2_147_483_647, // the largest timer Node allows (24.8 days); larger ones fire at once
      // 'sync' blocks a worker's event loop while it waits for the next task, which delays the
      // process events of the steps it already holds.
      atomics: 'disabled',
      workerData: { spawnMode: options.spawnMode, stepRegistryDir: options.stepRegistryDir, logDescriptor: logDescriptor(), logText: logIsText(), prepareHost: options.prepareHost === true },
    })));
    // A pool that cannot load fails each step dispatched to it (below), not the process.
    this.loading.catch(() => undefined);
  }

  dispatch(task: StepTask): StepHandle {
    markStage('step.dispatched');
    const { port1, port2 } = new MessageChannel();
    const run = (pool: Piscina): Promise<StepResult> => pool.run({ ...task, port: port2 }, { transferList: [port2] });
    const result: Promise<StepResult> = (this.pool ? run(this.pool) : this.loading.then(run))
      .catch((error: Error) => ({ kind: 'error' as const, code: 'pool_error', message: error.message }))
      .finally(() => {
        port1.close();
        markStage('step.result');
      });
    return {
      result,
      stop(signal: string, cleanupMs: number) {
        const message: ControlMessage = { type: 'stop', signal, cleanupMs };
        port1.postMessage(message);
      },
    };
  }

  async close(): Promise<void> {
    await (await this.loading.catch(() => undefined))?.close();
  }
}

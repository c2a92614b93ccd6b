// A small Piscina pool for CPU-bound work kept off the main thread (the parse of large definitions),
// apart from the step pool: a long parse never waits behind steps, nor steps behind a parse. Its
// threads start with the first task and leave after a minute idle; tasks beyond them wait in order.
import { Piscina } from 'piscina';

export interface TaskPoolOptions {
  /** The worker's entry file; its default export runs one task. */
  filename: URL;
  /** Threads at most: each holds one task, and a task's memory (tens of MB for a 1 MiB parse), at a time. */
  maxThreads?: number;
}

export class TaskPool<Task, Answer> {
  private readonly pool: Piscina<Task, Answer>;

  constructor(options: TaskPoolOptions) {
    this.pool = new Piscina<Task, Answer>({
      filename: options.filename.href,
      minThreads: 0,
      maxThreads: options.maxThreads ?? 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      atomics: 'disabled',
    });
  }

  run(task: Task): Promise<Answer> {
    return this.pool.run(task);
  }

  /** Waits for the tasks that threads hold; those still waiting for a thread are refused ('pool is closed'). */
  async close(): Promise<void> {
    await this.pool.close({ force: true });
  }
}

/**
 * A task's answer with `buffers` moved to the calling thread, not copied (a worker's default export
 * returns it). Each buffer is the worker's no longer: nothing may use it after.
 */
export function movedAnswer<Answer extends object>(answer: Answer, buffers: ArrayBuffer[]): Answer {
  return Piscina.move({ [Piscina.transferableSymbol]: buffers, [Piscina.valueSymbol]: answer } as unknown as ArrayBuffer) as unknown as Answer;
}

// A small Piscina pool for CPU-bound work kept off the main thread (the parse of large definitions),
// apart from the step pool: a long parse never waits behind steps, nor steps behind a parse. Its
// threads start with the first task and leave after a minute idle; tasks beyond them wait in order.
// Piscina itself loads with the first task: a process that never parses a large definition (a
// verb of the troupe command) never loads it.
import type { Piscina } from 'piscina';

export interface TaskPoolOptions {
  /** The worker's entry file; its default export runs one task. */
  filename: URL;
  /** Threads at most: each holds one task, and a task's memory (tens of MB for a 1 MiB parse), at a time. */
  maxThreads?: number;
}

export class TaskPool<Task, Answer> {
  private pool: Promise<Piscina<Task, Answer>> | undefined;
  private closed = false;

  constructor(private readonly options: TaskPoolOptions) {}

  run(task: Task): Promise<Answer> {
    if (this.closed) return Promise.reject(new Error('pool is closed'));
    this.pool ??= import('piscina').then(({ Piscina }) => new Piscina<Task, Answer>({
      filename: this.options.filename.href,
      minThreads: 0,
      maxThreads: this.options.maxThreads ?? 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      atomics: 'disabled',
    }));
    return this.pool.then((pool) => pool.run(task));
  }

  /** Waits for the tasks that threads hold; those still waiting for a thread are refused ('pool is closed'). */
  async close(): Promise<void> {
    this.closed = true;
    await (await this.pool?.catch(() => undefined))?.close({ force: true });
  }
}


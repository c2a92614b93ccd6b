// The jq thread of a pool worker: a thread of its own, started with the first jq step and ended
// after a minute without one. jq runs synchronously, a second or more on JSON of many megabytes, and
// a filter may never end: on the pool worker it would hold up every other step of that thread, and
// a stop could not interrupt it. Here a stop ends the thread (Piscina does so for an
// aborted task that is running), and the next job gets a new one. Jobs run one at a time, in order.
import type { Piscina } from 'piscina';
import type { JqAnswer } from './jq-program.ts';
import type { JqRequest } from './jq-thread.ts';

const threadFile = new URL(import.meta.url.endsWith('.ts') ? './jq-thread.ts' : './jq-thread.js', import.meta.url);

export type JqOutcome = JqAnswer | { kind: 'stopped' };

export interface JqJob {
  readonly outcome: Promise<JqOutcome>;
  /** Ends the job: a waiting one leaves the queue, a running one ends its thread. */
  stop(): void;
}

export class JqRunner {
  /** Loaded with the first job: a process that never runs jq (a command's) never loads Piscina. */
  private pool?: Promise<Piscina<JqRequest, JqAnswer>>;

  private threads(): Promise<Piscina<JqRequest, JqAnswer>> {
    this.pool ??= import('piscina').then(({ Piscina }) => new Piscina<JqRequest, JqAnswer>({
      filename: threadFile.href,
      minThreads: 0,
      maxThreads: 1,
      concurrentTasksPerWorker: 1,
      // An idle thread is ended: its WebAssembly memory keeps the size of the largest input it read.
      idleTimeout: 60_000,
      atomics: 'disabled',
    }));
    return this.pool;
  }

  run(request: JqRequest): JqJob {
    const abort = new AbortController();
    const outcome = this.threads().then((pool) => pool.run(request, { signal: abort.signal })).catch((error: Error): JqOutcome =>
      abort.signal.aborted ? { kind: 'stopped' } : { kind: 'error', message: `jq: the jq thread failed: ${error.message}` });
    return { outcome, stop: () => abort.abort() };
  }

  /** Ends the thread; a job still running ends as stopped. */
  async close(): Promise<void> {
    if (this.pool) await (await this.pool).close({ force: true });
  }
}

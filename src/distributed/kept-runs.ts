// What a worker keeps of the runs it finished: the files and records of its newest ones only, so
// that a worker that runs for months does not fill its disk. The server has every record, log and
// output of them already (and hands a retry the records it needs); the worker's copies serve a
// retry that comes back to it, whose kept steps' log files are still here.
import type { RunRecord } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';

export interface RunName {
  name: string;
  dagRunId: string;
}

/** Removes the runs' files and records, sub DAG runs first (given in that order). */
export type ForgetRuns = (runs: readonly RunName[]) => Promise<void>;

/** What the worker asks of its own store. */
export interface WorkerStore {
  forget: ForgetRuns;
  /** Stores records of earlier attempts as the server has them (a retried run's sub DAG runs). */
  keep(records: readonly RunRecord[]): Promise<void>;
}

export class KeptRuns {
  /** Finished trees by their root run's key, oldest first: each its runs, the root first. */
  private readonly trees = new Map<string, RunName[]>();
  /** One removal at a time, in the order the trees finished. */
  private removing: Promise<void> = Promise.resolve();

  /** `isActive(rootKey)`: the root is running again here (a retry): its files and records are its new attempt's. */
  constructor(private readonly keep: number, private readonly forget: ForgetRuns, private readonly isActive: (rootKey: string) => boolean) {}

  /** A tree's end was sent to the server: it is the newest kept; the oldest beyond `keep` go. */
  finished(rootKey: string, runs: readonly RunName[]): void {
    // A retry of a run kept already is as new as its last attempt.
    this.trees.delete(rootKey);
    this.trees.set(rootKey, [...runs]);
    while (this.trees.size > this.keep) {
      const [oldest, tree] = this.trees.entries().next().value as [string, RunName[]];
      this.trees.delete(oldest);
      // A run under way again (asked here and as its turn comes) keeps all of it; its end enters it anew.
      if (this.isActive(oldest)) continue;
      this.removing = this.removing.then(() => (this.isActive(oldest) ? undefined : this.forget([...tree].reverse()))).catch((error: unknown) => {
        log.warn({ dag: tree[0].name, dagRunId: tree[0].dagRunId, error: errorText(error) }, 'the worker\'s copy of a finished run could not be removed');
      });
    }
  }

  /** Resolves once the removals begun are done. */
  idle(): Promise<void> {
    return this.removing;
  }
}

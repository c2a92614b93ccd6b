// A large new run's node rows are written before its summary (RunStore.prepareFirstSave), and no
// read finds them until the summary is: if the process stops in between, or the save never
// commits, they would stay, found by nothing. So the run is marked in the flags database before
// the first row, the mark goes in the transaction of the run's first save, and a mark found when
// the store opens names rows to remove: the run has no summary, or the mark would be gone.
import type { Database } from 'lmdb';
import { keys } from './keys.ts';
import type { Key } from './stored-runs.ts';

interface Databases {
  flags: Database<unknown, Key>;
  runs: Database<unknown, Key>;
  nodes: Database<unknown, Key>;
}

/** Marks the run before its rows are written; the returned write commits before theirs (issued first). */
export function markWrittenAhead(flags: Database<unknown, Key>, name: string, dagRunId: string): Promise<boolean> {
  return flags.put(keys.writtenAhead(name, dagRunId), true);
}

/** The mark's removal, issued with the run's first save. */
export function clearWrittenAhead(flags: Database<unknown, Key>, name: string, dagRunId: string): Promise<boolean> {
  return flags.remove(keys.writtenAhead(name, dagRunId));
}

/**
 * At open: the rows of runs marked and never saved are removed, with their marks (a run saved
 * meanwhile keeps its rows: only the mark goes). Returns how many runs' rows went.
 */
export function sweepWrittenAhead({ flags, runs, nodes }: Databases, issue: (write: Promise<boolean>) => void): number {
  let removed = 0;
  for (const key of flags.getKeys(keys.allWrittenAhead())) {
    const [, name, dagRunId] = key as [string, string, string];
    if (runs.get(keys.run(name, dagRunId)) === undefined) {
      for (const row of nodes.getKeys(keys.allNodesOf(name, dagRunId))) issue(nodes.remove(row));
      removed++;
    }
    issue(flags.remove(key));
  }
  return removed;
}

// The status index (runs-by-status) filled for runs stored before it existed, once: a store opened
// by an older build has runs and no status rows. Runs written meanwhile add their own rows.
import type { Database, RootDatabase } from 'lmdb';
import { keys } from './keys.ts';
import type { Key, StoredRun } from './stored-runs.ts';

export function fillStatusIndex(root: RootDatabase, runs: Database<StoredRun, Key>, byStatus: Database<null, Key>, flags: Database<unknown, Key>): void {
  if (flags.get(keys.indexBuilt('runs-by-status')) === true) return;
  root.transactionSync(() => {
    for (const { key, value } of runs.getRange()) {
      const [name, dagRunId] = key as [string, string];
      void byStatus.put(keys.byStatus(value.status, value.createdAtMs, name, dagRunId), null);
    }
    void flags.put(keys.indexBuilt('runs-by-status'), true);
  });
}

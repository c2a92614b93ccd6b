// What a home's store holds, database by database: entries and the pages they take (LMDB's own
// counts), and the bytes per run of the whole. Read-only; the server may be stopped or running.
//   node --import tsx bench/store-stats.ts <home>...
import { open } from 'lmdb';
import { homePaths } from '../src/main.ts';

const DATABASES = ['runs', 'run-nodes', 'run-steps', 'specs', 'runs-by-time', 'runs-by-name', 'runs-by-status', 'events', 'flags'];

for (const home of process.argv.slice(2)) {
  const root = open({ path: homePaths(home).dataDir, maxDbs: 32, readOnly: true });
  const pageSize = (root.getStats() as { pageSize: number }).pageSize;
  const byDb: Record<string, { entries: number; pages: number }> = {};
  let pages = 0;
  for (const name of DATABASES) {
    const stats = root.openDB({ name }).getStats() as { entryCount: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
    const used = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;
    byDb[name] = { entries: stats.entryCount, pages: used };
    pages += used;
  }
  const runs = byDb.runs.entries;
  console.log(JSON.stringify({ home, runs, pageSize, usedBytes: pages * pageSize, bytesPerRun: Math.round((pages * pageSize) / runs), byDb }));
  await root.close();
}

// List endpoints at scale: one server in this process, 300 DAG files, and 1,000 then
// 100,000 finished runs written through the store (the API would take an hour to make 100,000).
// Prints one JSON line per store size: the median time of one request, one request at a time,
// per endpoint (of 41 requests; of 3 for the answer of every run past 10,000 runs). `fresh` figures make the listing again each time (a run is written before each
// request, so nothing kept from the previous answer serves it); the others may be answered from
// the listing kept since the last write.
//   node --import tsx bench/list-scale.ts [runs...]      default: 1000 100000
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus, type RunRecord } from '../src/core/index.ts';
import { homePaths, startTroupe } from '../src/main.ts';

const DAGS = 300;
const REQUESTS = 41;
const STATUSES = [RunStatus.Succeeded, RunStatus.Succeeded, RunStatus.Succeeded, RunStatus.Failed, RunStatus.Aborted];

/** Three days ago: 100,000 runs a second apart stay within the default retention (30 days). */
const BASE_MS = Date.now() - 3 * 86_400_000;

function run(index: number, name: string): RunRecord {
  const iso = new Date(BASE_MS + index * 1000).toISOString();
  const dagRunId = `r${String(index).padStart(7, '0')}`;
  return {
    name, dagRunId, attemptId: `a${index}`, rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: STATUSES[index % STATUSES.length], queuedAt: '', startedAt: iso, finishedAt: iso, log: `/tmp/logs/${name}/${dagRunId}.log`, params: '{}',
    nodes: [{ step: { name: 's1', command: 'true' }, status: 4, stdout: `/tmp/logs/${name}/${dagRunId}.s1.out`, stderr: '', startedAt: iso, finishedAt: iso, retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [] } as never],
    createdAtMs: BASE_MS + index * 1000,
  };
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  for (const size of sizes.length > 0 ? sizes : [1000, 100_000]) {
    const home = await mkdtemp(join(tmpdir(), 'troupe-list-bench-'));
    const paths = homePaths(home);
    const troupe = await startTroupe({ host: '127.0.0.1', port: 0, ...paths, home, maxThreads: 2 });
    try {
      const names = Array.from({ length: DAGS }, (_, index) => `bench-${String(index).padStart(3, '0')}`);
      await Promise.all(names.map((name, index) =>
        writeFile(join(paths.dagsDir, `${name}.yaml`), `description: bench fixture ${index}\ntags:\n  - bench\n  - t${index % 10}\nsteps:\n  - name: s1\n    command: "true"\n`)));
      // 30% on the first DAG, the rest round-robin (as the peer's api workload); 5,000 per transaction.
      for (let start = 0; start < size; start += 5000) {
        const batch: Promise<void>[] = [];
        for (let index = start; index < Math.min(size, start + 5000); index++) {
          batch.push(troupe.runs.save(run(index, index % 10 < 3 ? names[0] : names[1 + (index % (DAGS - 1))])));
        }
        await Promise.all(batch);
      }
      const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
      let extra = size;
      const time = async (path: string, fresh: boolean, requests = REQUESTS) => {
        const times: number[] = [];
        let bytes = 0;
        for (let i = 0; i < requests; i++) {
          if (fresh) await troupe.runs.save(run(extra++, names[1]));
          const started = performance.now();
          const response = await fetch(base + path);
          bytes = (await response.arrayBuffer()).byteLength;
          times.push(performance.now() - started);
          if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
        }
        times.sort((a, b) => a - b);
        return { medianMs: Math.round(times[times.length >> 1] * 100) / 100, bytes };
      };
      const figures: Record<string, unknown> = {};
      figures['dags?perPage=100'] = await time('/dags?perPage=100', true);
      figures['dags?perPage=100&tag=t3'] = await time('/dags?perPage=100&tag=t3', true);
      // Every run in one answer (the specification's): 48 MB at 100,000 runs, too large to keep.
      figures['dag-runs'] = await time('/dag-runs', false, size <= 10_000 ? REQUESTS : 3);
      figures['dag-runs fresh'] = await time('/dag-runs', true, size <= 10_000 ? REQUESTS : 3);
      figures['dag-runs?limit=100 fresh'] = await time('/dag-runs?limit=100', true);
      figures['dag-runs?status=2&limit=100 fresh'] = await time('/dag-runs?status=2&limit=100', true);
      figures[`dag-runs?name=${names[5]} fresh`] = await time(`/dag-runs?name=${names[5]}`, true);
      const cursor = (await (await fetch(`${base}/dag-runs?limit=500`)).json() as { nextCursor: string }).nextCursor;
      figures['dag-runs?limit=500&cursor= fresh'] = await time(`/dag-runs?limit=500&cursor=${cursor}`, true);
      console.log(JSON.stringify({ runs: size, dags: DAGS, requests: REQUESTS, figures }));
    } finally {
      await troupe.close();
      await rm(home, { recursive: true, force: true });
    }
  }
}

await main();

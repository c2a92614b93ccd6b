// latency A/B: this checkout's build against another checkout's, on the latency workload.
// Usage: npm run bench:ab -- <other checkout> [blocks]   (the other checkout needs its dist/ built)
//
// On the development VMs the latency moves by a millisecond and more from one minute to the next
// (p50 3.3-6.4 ms for one build over two hours, 2026-11-21), so two benches run one after the other
// compare the minutes, not the builds. Here both servers stay up and warm, and blocks of runs
// alternate between them, the order swapped every block; an A/A comparison over 20 blocks differs
// by 0.1-0.2 ms, which is about what this can resolve.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { rm } from 'node:fs/promises';
import { chooseHome, percentile, round, startBenchServer, timeRuns, type BenchServer } from './harness.ts';
import { LATENCY_DAG, WARMUP_RUNS } from './latency.ts';

const BLOCK_RUNS = 50;

const [other, blocksArg] = process.argv.slice(2);
const blocks = Number(blocksArg ?? 16);
if (!other || !existsSync(resolve(other, 'dist', 'cli', 'main.js')) || !Number.isInteger(blocks) || blocks < 1) {
  console.error('usage: npm run bench:ab -- <other checkout with dist/ built> [blocks]');
  process.exit(2);
}
const checkouts = [resolve(import.meta.dirname, '..'), resolve(other)];
const servers: BenchServer[] = [];
// Both homes in one folder: where a server's files go changes what creating them costs (harness.ts).
const { home: folder } = await chooseHome();
try {
  for (const checkout of checkouts) servers.push(await startBenchServer(checkout, folder));
  for (const server of servers) {
    await server.writeDag(LATENCY_DAG.name, LATENCY_DAG.spec);
    await timeRuns(server, LATENCY_DAG.name, 0, WARMUP_RUNS);
  }
  const times: number[][] = [[], []];
  const blockP50s: number[][] = [[], []];
  for (let block = 0; block < blocks; block++) {
    for (const side of block % 2 === 0 ? [0, 1] : [1, 0]) {
      const { times: blockTimes } = await timeRuns(servers[side], LATENCY_DAG.name, BLOCK_RUNS, 0);
      times[side].push(...blockTimes);
      blockP50s[side].push(round(percentile(blockTimes, 50)));
    }
  }
  const summary = (i: number) => ({
    checkout: checkouts[i], p50Ms: round(percentile(times[i], 50)), p95Ms: round(percentile(times[i], 95)),
    meanMs: round(times[i].reduce((sum, t) => sum + t, 0) / times[i].length), blockP50Ms: blockP50s[i],
  });
  console.log(JSON.stringify({
    workload: 'latency-ab', warmupRuns: WARMUP_RUNS, blocks, blockRuns: BLOCK_RUNS, a: summary(0), b: summary(1),
    bFasterInBlocks: blockP50s[1].filter((p50, i) => p50 < blockP50s[0][i]).length,
  }));
} finally {
  for (const server of servers) await server.stop();
  await rm(folder, { recursive: true, force: true });
}

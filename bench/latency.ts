// latency: one-step run (`true`), from the start request to the final status seen by a client
// polling the run every 1 ms.
import { percentile, round, timeRuns, type BenchServer } from './harness.ts';

/**
 * Runs before the measured ones: they start the pool thread and let V8 optimize the start and step
 * paths, which takes a few hundred runs. Medians of blocks of 100 runs (2026-11-21): 5.1-6.0 ms
 * (runs 1-100), 4.0-4.4 (201-300), 3.7-4.0 (from 501 on). V8's background threads spent 0.9 ms of
 * CPU per run over runs 20 to 320 and 0.5 ms after 400; idle with --no-opt --no-maglev. The
 * warm-up was 5 runs until 2026-11-20 and 100 until 2026-11-21; `warmupP50Ms` reports the warm-up
 * runs' own median, so the figure of a freshly started server stays visible.
 */
export const WARMUP_RUNS = 500;

/** The one-step DAG the latency is measured on (also by ab.ts). */
export const LATENCY_DAG = { name: 'bench-latency', spec: 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n' };

/**
 * Measured runs. One run takes about 4 ms, so 100 runs sample 0.4 s of the machine, and on the
 * development VMs the latency moves by a millisecond and more within seconds: of 90 consecutive
 * blocks of 100 runs (2026-11-21, three servers, 3,000 runs each) the blocks' medians ranged from
 * 3.18 to 5.23 ms while the three servers' medians over all their runs were 3.67, 3.85 and 3.75.
 * 1,000 runs (about 4 s) give the p50 of the server rather than of one moment of the VM, though
 * not of a minute in which the host slows the VM down (bench/README.md); `blockP50Ms` keeps the
 * spread of the blocks of 100 in sight.
 */
const MEASURED_RUNS = 1000;
const BLOCK = 100;

export async function latency(server: BenchServer, runs = MEASURED_RUNS): Promise<Record<string, unknown>> {
  await server.writeDag(LATENCY_DAG.name, LATENCY_DAG.spec);
  const { times, warmupTimes } = await timeRuns(server, LATENCY_DAG.name, runs, WARMUP_RUNS);
  const blocks: number[] = [];
  for (let start = 0; start + BLOCK <= times.length; start += BLOCK) blocks.push(percentile(times.slice(start, start + BLOCK), 50));
  return {
    workload: 'latency', runs, warmupRuns: WARMUP_RUNS, p50Ms: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)),
    ...(blocks.length > 0 ? { blockP50Ms: { runs: BLOCK, min: round(Math.min(...blocks)), median: round(percentile(blocks, 50)), max: round(Math.max(...blocks)) } } : {}),
    warmupP50Ms: round(percentile(warmupTimes, 50)), targetP50Ms: 5,
  };
}

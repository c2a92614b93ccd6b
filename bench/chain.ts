// chain: 50 sequential `true` steps, start request to the final status (polled every 1 ms).
import { percentile, round, timeRuns, type BenchServer } from './harness.ts';

/**
 * Chains run before the measured ones. V8 goes on optimizing the per-step path for about 2,000
 * steps: medians of 8 chains fell from 96-105 ms (chains 1-8) to 82-92 (17-24), 74-78 (33-40) and
 * 69-74 (57-64), and stayed at 93-121 throughout with --no-opt (measured 2026-11-21). Until then
 * the warm-up was one chain, so the figure was mostly that of code not yet optimized.
 * `warmupMedianMs` and `firstMs` keep the figures of a freshly started server visible.
 */
const WARMUP_CHAINS = 40;

export async function chain(server: BenchServer, repeats = 11): Promise<Record<string, unknown>> {
  await server.writeDag('bench-chain', 'maxActiveRuns: -1\nsteps:\n' + '  - "true"\n'.repeat(50));
  const { times, warmupTimes } = await timeRuns(server, 'bench-chain', repeats, WARMUP_CHAINS);
  return {
    workload: 'chain', steps: 50, repeats, warmupRuns: WARMUP_CHAINS,
    medianMs: round(percentile(times, 50), 1), bestMs: round(Math.min(...times), 1),
    warmupMedianMs: round(percentile(warmupTimes, 50), 1), firstMs: round(warmupTimes[0], 1), targetMs: 100,
  };
}

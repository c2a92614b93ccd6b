// latency: one-step run (`true`), from the start request to the final status seen by a client
// polling the run every 1 ms.
import { percentile, pollUntilFinal, round, type BenchServer } from './harness.ts';

/**
 * Runs before the measured ones: they start the pool thread and warm the JIT. V8 keeps optimizing
 * the start and step paths for the first few hundred runs: its background threads spent 0.9 ms of
 * CPU per run over runs 20 to 320 and 0.5 ms after 400 (measured; idle with --no-opt --no-maglev),
 * on a 2-core machine where a run needs about 3 ms of CPU. Until 2026-11-21 the warm-up was 5 runs.
 */
const WARMUP_RUNS = 100;

export async function latency(server: BenchServer, runs = 60): Promise<Record<string, unknown>> {
  await server.writeDag('bench-latency', 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n');
  const times: number[] = [];
  for (let i = 0; i < runs + WARMUP_RUNS; i++) {
    const t0 = performance.now();
    const { body } = await server.post('/dags/bench-latency/start', {});
    const run = await pollUntilFinal(server, 'bench-latency', body.dagRunId, 1);
    if (run.status !== 4) throw new Error(`latency run failed: ${JSON.stringify(run)}`);
    if (i >= WARMUP_RUNS) times.push(performance.now() - t0);
  }
  return { workload: 'latency', runs, warmupRuns: WARMUP_RUNS, p50Ms: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)), targetP50Ms: 5 };
}

// large-dag: one inline run (POST /dag-runs) of 1,000 and of 10,000 chained `true` steps, start
// request to the final status, while /health is probed every 10 ms on its own connection: one
// large run must cost in proportion to its steps and must not hold other requests back.
import { Agent, request } from 'undici';
import { percentile, pollUntilFinal, round, sleep, type BenchServer } from './harness.ts';

/** TROUPE_BENCH_LARGE_DAG_STEPS="1000,3000" measures other sizes (the ratio is of the last to the first). */
const SIZES = (process.env.TROUPE_BENCH_LARGE_DAG_STEPS ?? '1000,10000').split(',').map(Number);
const PROBE_INTERVAL_MS = 10;
/** A run of 10,000 steps takes about a minute on the development VM; far longer means a regression. */
const RUN_TIMEOUT_MS = 15 * 60_000;

export function chainSpec(steps: number): string {
  let spec = 'maxActiveRuns: -1\nsteps:\n';
  for (let index = 0; index < steps; index++) spec += `  - name: s${index}\n    command: "true"\n`;
  return spec;
}

/** Probes /health every PROBE_INTERVAL_MS until stopped; the latency of each answer, in ms. */
function probeHealth(base: string): { stop(): Promise<number[]> } {
  // Its own connection: the probe must not queue behind the run's polls.
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  const latencies: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const response = await request(`${base}/health`, { dispatcher });
      await response.body.text();
      const ms = performance.now() - t0;
      latencies.push(ms);
      if (response.statusCode !== 200) throw new Error(`/health answered ${response.statusCode}`);
      await sleep(Math.max(PROBE_INTERVAL_MS - ms, 0));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await dispatcher.close();
      return latencies;
    },
  };
}

export async function largeDag(server: BenchServer): Promise<Record<string, unknown>> {
  const sizes: Record<string, unknown>[] = [];
  for (const steps of SIZES) {
    const spec = chainSpec(steps);
    const probe = probeHealth(server.base);
    const t0 = performance.now();
    const { status, body } = await server.post('/dag-runs', { spec, name: `bench-large-${steps}` });
    if (status !== 200) throw new Error(`inline start answered ${status}: ${JSON.stringify(body)}`);
    const startMs = performance.now() - t0;
    // Polled every 100 ms: the run's own polls should cost little beside it.
    const run = await pollUntilFinal(server, `bench-large-${steps}`, body.dagRunId, 100, RUN_TIMEOUT_MS);
    const runMs = performance.now() - t0;
    const health = await probe.stop();
    if (run.status !== 4) throw new Error(`run of ${steps} steps ended ${run.statusLabel}`);
    sizes.push({
      steps, requestKb: round(Buffer.byteLength(JSON.stringify({ spec })) / 1024, 1), startMs: round(startMs, 1), runMs: round(runMs), msPerStep: round(runMs / steps, 3),
      healthProbes: health.length, healthP50Ms: round(percentile(health, 50)), healthP99Ms: round(percentile(health, 99)), healthMaxMs: round(Math.max(...health)),
    });
  }
  const [small, large] = [sizes[0], sizes[sizes.length - 1]] as Array<{ steps: number; runMs: number; healthMaxMs: number }>;
  return {
    workload: 'large-dag', sizes, runTimeRatio: round(large.runMs / small.runMs, 1), stepRatio: large.steps / small.steps,
    healthMaxMs: Math.max(...sizes.map((size) => (size as { healthMaxMs: number }).healthMaxMs)), targetHealthMaxMs: 50,
  };
}

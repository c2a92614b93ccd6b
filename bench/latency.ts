// latency: one-step run (`true`), from the start request to the final status seen by a client
// polling the run every 1 ms.
import { percentile, pollUntilFinal, round, type BenchServer } from './harness.ts';

export async function latency(server: BenchServer, runs = 60): Promise<Record<string, unknown>> {
  await server.writeDag('bench-latency', 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n');
  const times: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    const t0 = performance.now();
    const { body } = await server.post('/dags/bench-latency/start', {});
    const run = await pollUntilFinal(server, 'bench-latency', body.dagRunId, 1);
    if (run.status !== 4) throw new Error(`latency run failed: ${JSON.stringify(run)}`);
    if (i >= 5) times.push(performance.now() - t0); // the first runs warm the pool and the JIT
  }
  return { workload: 'latency', runs, p50Ms: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)), targetP50Ms: 5 };
}

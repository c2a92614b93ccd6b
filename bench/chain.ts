// chain: 50 sequential `true` steps, start request to the final status (polled every 1 ms).
import { percentile, pollUntilFinal, round, type BenchServer } from './harness.ts';

export async function chain(server: BenchServer, repeats = 7): Promise<Record<string, unknown>> {
  await server.writeDag('bench-chain', 'maxActiveRuns: -1\nsteps:\n' + '  - "true"\n'.repeat(50));
  const times: number[] = [];
  for (let i = 0; i < repeats + 1; i++) {
    const t0 = performance.now();
    const { body } = await server.post('/dags/bench-chain/start', {});
    const run = await pollUntilFinal(server, 'bench-chain', body.dagRunId, 1);
    if (run.status !== 4) throw new Error(`chain run failed: ${run.statusLabel}`);
    if (i > 0) times.push(performance.now() - t0);
  }
  return { workload: 'chain', steps: 50, repeats, medianMs: round(percentile(times, 50), 1), bestMs: round(Math.min(...times), 1), targetMs: 100 };
}

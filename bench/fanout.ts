// fanout: 100 independent `sleep 0.2` steps with maxActiveSteps 100, start to final status.
import { percentile, pollUntilFinal, round, type BenchServer } from './harness.ts';

export async function fanout(server: BenchServer, repeats = 3): Promise<Record<string, unknown>> {
  const steps = Array.from({ length: 100 }, (_, i) => `  - name: s${i}\n    command: sleep 0.2\n`).join('');
  await server.writeDag('bench-fanout', `type: graph\nmaxActiveRuns: -1\nmaxActiveSteps: 100\nsteps:\n${steps}`);
  const times: number[] = [];
  for (let i = 0; i < repeats + 1; i++) {
    const t0 = performance.now();
    const { body } = await server.post('/dags/bench-fanout/start', {});
    const run = await pollUntilFinal(server, 'bench-fanout', body.dagRunId, 1);
    if (run.status !== 4) throw new Error(`fanout run failed: ${run.statusLabel}`);
    if (i > 0) times.push(performance.now() - t0);
  }
  return { workload: 'fanout', steps: 100, repeats, medianMs: round(percentile(times, 50), 1), bestMs: round(Math.min(...times), 1), targetMs: 350 };
}

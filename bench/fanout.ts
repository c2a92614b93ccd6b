// fanout: 100 independent `sleep 0.2` steps with maxActiveSteps 100, start to final status.
import { percentile, round, timeRuns, type BenchServer } from './harness.ts';

export async function fanout(server: BenchServer, repeats = 3): Promise<Record<string, unknown>> {
  const steps = Array.from({ length: 100 }, (_, i) => `  - name: s${i}\n    command: sleep 0.2\n`).join('');
  await server.writeDag('bench-fanout', `type: graph\nmaxActiveRuns: -1\nmaxActiveSteps: 100\nsteps:\n${steps}`);
  const { times } = await timeRuns(server, 'bench-fanout', repeats);
  return { workload: 'fanout', steps: 100, repeats, medianMs: round(percentile(times, 50), 1), bestMs: round(Math.min(...times), 1), targetMs: 350 };
}

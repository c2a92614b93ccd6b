// chain: 50 sequential `true` steps, start request to the final status (polled every 1 ms).
import { percentile, round, timeRuns, type BenchServer } from './harness.ts';

export async function chain(server: BenchServer, repeats = 7): Promise<Record<string, unknown>> {
  await server.writeDag('bench-chain', 'maxActiveRuns: -1\nsteps:\n' + '  - "true"\n'.repeat(50));
  const times = await timeRuns(server, 'bench-chain', repeats);
  return { workload: 'chain', steps: 50, repeats, medianMs: round(percentile(times, 50), 1), bestMs: round(Math.min(...times), 1), targetMs: 100 };
}

// throughput: 200 one-step runs started with 16 requests in flight; runs/s from the first start
// until the listing shows all 200 final.
import { round, sleep, type BenchServer } from './harness.ts';

/** `name`: the DAG's, a new one for each measurement on the same server (run ids repeat per DAG). */
export async function throughput(server: BenchServer, total = 200, inFlight = 16, name = 'bench-throughput'): Promise<Record<string, unknown>> {
  await server.writeDag(name, 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n');
  // Warm-up outside the measurement.
  await server.post(`/dags/${name}/start`, { dagRunId: 'warmup' });
  await sleep(200);
  const t0 = performance.now();
  let next = 0;
  let refused = 0;
  const ids: string[] = [];
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < total) {
      const index = next++;
      const response = await server.post(`/dags/${name}/start`, { dagRunId: `t${index}` });
      if (response.status === 200) ids.push(response.body.dagRunId);
      else refused++;
    }
  }));
  const startedMs = performance.now() - t0;
  let finished = 0;
  let failed = 0;
  for (;;) {
    const { dagRuns } = await server.get(`/dag-runs?name=${name}`);
    const measured = dagRuns.filter((run: any) => run.dagRunId !== 'warmup');
    finished = measured.filter((run: any) => [2, 3, 4, 6].includes(run.status)).length;
    failed = measured.filter((run: any) => run.status !== 4 && [2, 3, 6].includes(run.status)).length;
    if (finished + refused >= total) break;
    if (performance.now() - t0 > 60_000) break;
    await sleep(5);
  }
  const elapsed = performance.now() - t0;
  return {
    workload: 'throughput', runs: total, inFlight, runsPerSec: round(finished / (elapsed / 1000), 1),
    elapsedMs: round(elapsed, 1), startsAcceptedInMs: round(startedMs, 1), failed, refused, targetRunsPerSec: 450,
  };
}

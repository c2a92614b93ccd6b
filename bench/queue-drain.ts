// queue-drain: 1,000 one-step runs enqueued by 32 clients into a custom queue of maxConcurrency 16
// (the bench server's config), drained; runs/s from the first enqueue until all are final, beside
// the same 1,000 runs started directly by 32 clients just before. A sampler of GET /queues (every
// 50 ms, while the queued runs go) records the most runs the queue ever showed running: it must
// never pass 16.
import { round, sleep, type BenchServer } from './harness.ts';

export const BENCH_QUEUE = { name: 'bench-q', maxConcurrency: 16 };

async function drive(server: BenchServer, name: string, path: string, total: number, clients: number) {
  const t0 = performance.now();
  let next = 0;
  let refused = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total) {
      const index = next++;
      const response = await server.post(path, { dagRunId: `r${index}` });
      if (response.status !== 200) refused++;
    }
  }));
  const acceptedMs = performance.now() - t0;
  let finished = 0;
  let succeeded = 0;
  for (;;) {
    const { dagRuns } = await server.get(`/dag-runs?name=${name}`);
    const measured = dagRuns.filter((run: any) => !run.dagRunId.startsWith('warmup'));
    finished = measured.filter((run: any) => [2, 3, 4, 6].includes(run.status)).length;
    succeeded = measured.filter((run: any) => run.status === 4).length;
    if (finished + refused >= total || performance.now() - t0 > 120_000) break;
    await sleep(10);
  }
  const elapsedMs = performance.now() - t0;
  return { runsPerSec: round(finished / (elapsedMs / 1000), 1), elapsedMs: round(elapsedMs, 1), acceptedMs: round(acceptedMs, 1), succeeded, refused, lost: total - refused - finished };
}

export async function queueDrain(server: BenchServer, total = 1000, clients = 32): Promise<Record<string, unknown>> {
  const queued = 'bench-queued';
  const direct = 'bench-direct';
  await server.writeDag(queued, `queue: ${BENCH_QUEUE.name}\nmaxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n`);
  await server.writeDag(direct, 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n');
  // Both paths warm (JIT) before either is measured; the direct starts go first, so a run that
  // gets warmer as it goes favours them.
  for (let index = 0; index < 50; index++) {
    await server.post(`/dags/${queued}/enqueue`, { dagRunId: `warmup${index}` });
    await server.post(`/dags/${direct}/start`, { dagRunId: `warmup${index}` });
  }
  await sleep(500);
  const directly = await drive(server, direct, `/dags/${direct}/start`, total, clients);
  let sampling = true;
  let maxRunning = 0;
  const sampler = (async () => {
    while (sampling) {
      const { queues } = await server.get('/queues');
      const queue = queues.find((candidate: any) => candidate.name === BENCH_QUEUE.name);
      maxRunning = Math.max(maxRunning, queue?.summary.running ?? 0);
      await sleep(50);
    }
  })();
  const viaQueue = await drive(server, queued, `/dags/${queued}/enqueue`, total, clients);
  sampling = false;
  await sampler;
  return {
    workload: 'queue-drain', runs: total, clients, maxConcurrency: BENCH_QUEUE.maxConcurrency,
    queued: viaQueue, direct: directly, ratioToDirect: round(viaQueue.runsPerSec / directly.runsPerSec, 2), target: 0.8,
    maxRunningSeen: maxRunning, limitHeld: maxRunning <= BENCH_QUEUE.maxConcurrency,
  };
}

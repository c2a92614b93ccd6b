// large-dag: one inline run (POST /dag-runs) of 1,000 and of 10,000 chained `true` steps, start
// request to the final status, while /health (and a 404) are probed every 10 ms on connections of
// their own: one large run must cost in proportion to its steps and must not hold other requests back.
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { percentile, round, sleep, type BenchServer } from './harness.ts';

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

/**
 * The server's CPU time (user + system, all its threads) in ms: unlike the run's wall time it does
 * not grow when other processes take the machine's cores.
 */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ');
  // utime and stime, the 14th and 15th fields of the line (the 12th and 13th after the command).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Probe {
  /** When it was sent (performance.now()) and how long its answer took, in ms. */
  sentAt: number;
  ms: number;
}

/**
 * Probes `path` every PROBE_INTERVAL_MS until stopped, expecting `status`. /health writes and reads
 * a probe record when its last one is older than 2 s, and then waits for that commit behind the
 * run's; the 404 of a run that does not exist is answered by the main thread alone, so it shows how
 * long the event loop was held.
 */
export function probe(base: string, path: string, status: number): { stop(): Promise<Probe[]> } {
  // Its own connection: the probe must not queue behind the run's polls.
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  const probes: Probe[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const response = await request(`${base}${path}`, { dispatcher });
      await response.body.text();
      const ms = performance.now() - t0;
      probes.push({ sentAt: t0, ms });
      if (response.statusCode !== status) throw new Error(`${path} answered ${response.statusCode}`);
      await sleep(Math.max(PROBE_INTERVAL_MS - ms, 0));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await dispatcher.close();
      return probes;
    },
  };
}

/**
 * Waits for the run's final status, read every 100 ms from the listing of its name: a summary,
 * while the details of a run present every node (a few megabytes at 10,000 steps) and would
 * measure the presenting rather than the run.
 */
async function untilFinal(server: BenchServer, name: string, dagRunId: string): Promise<void> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const { dagRuns } = await server.get(`/dag-runs/${name}?dagRunId=${encodeURIComponent(dagRunId)}`);
    const status = dagRuns?.[0]?.status;
    if (status === 4) return;
    if (status === 2 || status === 3 || status === 6) throw new Error(`run ${name}/${dagRunId} ended with status ${status}`);
    if (Date.now() > deadline) throw new Error(`run ${name}/${dagRunId} did not finish in ${RUN_TIMEOUT_MS} ms`);
    await sleep(100);
  }
}

/** One run of the smallest size before the measured ones: V8 optimizes the step path over its first thousands of steps (chain.ts). */
async function warmUp(server: BenchServer, steps: number): Promise<number> {
  const t0 = performance.now();
  const { body } = await server.post('/dag-runs', { spec: chainSpec(steps), name: 'bench-large-warmup' });
  await untilFinal(server, 'bench-large-warmup', body.dagRunId);
  return performance.now() - t0;
}

export async function largeDag(server: BenchServer): Promise<Record<string, unknown>> {
  const warmupMs = await warmUp(server, SIZES[0]);
  const sizes: Record<string, unknown>[] = [];
  for (const steps of SIZES) {
    const spec = chainSpec(steps);
    const health = probe(server.base, '/health', 200);
    const loop = probe(server.base, '/dag-runs/bench-large-none/none', 404);
    const cpu0 = await cpuMs(server.pid);
    const t0 = performance.now();
    const { status, body } = await server.post('/dag-runs', { spec, name: `bench-large-${steps}` });
    if (status !== 200) throw new Error(`inline start answered ${status}: ${JSON.stringify(body)}`);
    const answeredAt = performance.now();
    const startMs = answeredAt - t0;
    await untilFinal(server, `bench-large-${steps}`, body.dagRunId);
    const runMs = performance.now() - t0;
    const serverCpuMs = (await cpuMs(server.pid)) - cpu0;
    // The start request parses and plans the whole definition; the run itself begins as it answers.
    const latency = (probes: Probe[]) => {
      const all = probes.map(({ ms }) => ms);
      const afterStart = probes.filter(({ sentAt }) => sentAt >= answeredAt).map(({ ms }) => ms);
      return {
        probes: all.length, p50Ms: round(percentile(all, 50)), p99Ms: round(percentile(all, 99)), maxMs: round(Math.max(...all)),
        afterStart: { p99Ms: round(percentile(afterStart, 99)), maxMs: round(Math.max(...afterStart)) },
      };
    };
    const healthLatency = latency(await health.stop());
    const notFoundLatency = latency(await loop.stop());
    // The details once, after the run: every node, and what presenting them all costs.
    const d0 = performance.now();
    const run = (await server.get(`/dag-runs/bench-large-${steps}/${body.dagRunId}`)).dagRun;
    const detailsMs = performance.now() - d0;
    const succeeded = run.nodes.filter((node: { status: number }) => node.status === 4).length;
    if (run.status !== 4 || succeeded !== steps) throw new Error(`run of ${steps} steps ended ${run.statusLabel}, ${succeeded} nodes succeeded`);
    sizes.push({
      steps, requestKb: round(Buffer.byteLength(JSON.stringify({ spec })) / 1024, 1), startMs: round(startMs, 1), runMs: round(runMs), msPerStep: round(runMs / steps, 3), serverCpuMs: Math.round(serverCpuMs),
      health: healthLatency, notFound: notFoundLatency, detailsMs: round(detailsMs, 1),
    });
  }
  const [small, large] = [sizes[0], sizes[sizes.length - 1]] as Array<{ steps: number; runMs: number; serverCpuMs: number }>;
  return {
    workload: 'large-dag', warmupRunMs: Math.round(warmupMs), sizes, stepRatio: large.steps / small.steps, runTimeRatio: round(large.runMs / small.runMs, 1),
    serverCpuRatio: round(large.serverCpuMs / small.serverCpuMs, 1),
    healthMaxMs: Math.max(...sizes.map((size) => (size as { health: { maxMs: number } }).health.maxMs)),
    healthMaxAfterStartMs: Math.max(...sizes.map((size) => (size as { health: { afterStart: { maxMs: number } } }).health.afterStart.maxMs)),
    targetHealthMaxMs: 50,
  };
}

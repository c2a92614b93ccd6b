// large-start: what starting a run of 10,000 chained steps costs the server's main thread, for an
// inline start (POST /dag-runs) and a stored DAG's (POST /dags/{fileName}/start), each build given
// in turn (rounds alternate, so that builds compared run in the same minutes). Per start: the
// main thread's CPU time from the request to 0.3 s after its answer (scheduler statistics: not
// the time it waited for a core), the longest turn of its event loop in CPU time and in wall time
// (turn-probe.mjs), and the slowest answer of a 404 probed every 10 ms on its own connection.
// The run's first step sleeps; the run is stopped after each start. Prints a JSON line per start
// and the medians per build.
//   node --import tsx bench/large-start.ts [checkout...] (default: this one; ROUNDS=3, STARTS=2 per server)
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { percentile, sleep, startBenchServer, type BenchServer } from './harness.ts';
import { probe } from './large-dag.ts';

const STEPS = 10_000;
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const STARTS = Number(process.env.STARTS ?? 2);
const PROBE_OUT = join(tmpdir(), `troupe-turn-probe-${process.pid}.json`);

/** A chain whose first step waits, so that the start, not the run, is measured. */
function chainSpec(steps: number): string {
  let spec = 'maxActiveRuns: -1\nsteps:\n  - name: s0\n    command: "sleep 30"\n';
  for (let index = 1; index < steps; index++) spec += `  - name: s${index}\n    command: "true"\n`;
  return spec;
}

async function mainThreadCpuMs(pid: number): Promise<number> {
  return Number((await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')).split(' ')[0]) / 1e6;
}

/** The longest turn since the last call (turn-probe.mjs). */
async function longestTurn(pid: number): Promise<{ cpuMs: number; wallMs: number }> {
  process.kill(pid, 'SIGUSR2');
  await sleep(50);
  return JSON.parse(await readFile(PROBE_OUT, 'utf8'));
}

async function start(server: BenchServer, kind: 'inline' | 'stored', n: number): Promise<Record<string, number | string>> {
  const name = `bench-start-${kind}-${n}`;
  if (kind === 'stored') {
    await server.writeDag(name, chainSpec(STEPS));
    // Parsed once before: the start is measured, not the first parse of the file.
    await server.get(`/dags/${name}`);
  }
  const spec = kind === 'inline' ? chainSpec(STEPS) : '';
  await sleep(300);
  const probes = probe(server.base, '/dag-runs/bench-none/none', 404);
  await sleep(100);
  await longestTurn(server.pid);
  const cpu0 = await mainThreadCpuMs(server.pid);
  const t0 = performance.now();
  const { status, body } = kind === 'inline' ? await server.post('/dag-runs', { spec, name }) : await server.post(`/dags/${name}/start`, {});
  const startMs = performance.now() - t0;
  // Past the answer too: what the start leaves to the turns after it (its commit's resolution).
  await sleep(300);
  const cpuMs = (await mainThreadCpuMs(server.pid)) - cpu0;
  const turn = await longestTurn(server.pid);
  const answers = (await probes.stop()).map(({ ms }) => ms);
  if (status !== 200) throw new Error(`${kind} start answered ${status}: ${JSON.stringify(body)}`);
  await server.post(`/dag-runs/${name}/${body.dagRunId}/stop`, {});
  await sleep(300);
  return { kind, startMs: Math.round(startMs), mainCpuMs: Math.round(cpuMs), turnCpuMs: Math.round(turn.cpuMs), turnWallMs: Math.round(turn.wallMs), probeMaxMs: Math.round(Math.max(...answers)) };
}

const checkouts = process.argv.length > 2 ? process.argv.slice(2).map((path) => resolve(path)) : [resolve(import.meta.dirname, '..')];
process.env.TROUPE_TURN_PROBE_OUT = PROBE_OUT;
process.env.TROUPE_BENCH_NODE_ARGS = `${process.env.TROUPE_BENCH_NODE_ARGS ?? ''} --import ${resolve(import.meta.dirname, 'turn-probe.mjs')}`;
const results: Array<Record<string, number | string>> = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const checkout of checkouts) {
    const server = await startBenchServer(checkout);
    try {
      // Unmeasured: the first start of each kind loads and optimizes the code it runs.
      await start(server, 'inline', 0);
      await start(server, 'stored', 0);
      for (let n = 1; n <= STARTS; n++) {
        for (const kind of ['inline', 'stored'] as const) {
          const result = { checkout, round, ...(await start(server, kind, n)) };
          results.push(result);
          console.log(JSON.stringify(result));
        }
      }
    } finally {
      await server.stop();
    }
  }
}
for (const checkout of checkouts) {
  for (const kind of ['inline', 'stored']) {
    const mine = results.filter((result) => result.checkout === checkout && result.kind === kind);
    const summary = (field: string) => {
      const values = mine.map((result) => Number(result[field]));
      return { median: percentile(values, 50), min: Math.min(...values), max: Math.max(...values) };
    };
    console.log(JSON.stringify({ checkout, kind, starts: mine.length, mainCpuMs: summary('mainCpuMs'), turnCpuMs: summary('turnCpuMs'), turnWallMs: summary('turnWallMs'), probeMaxMs: summary('probeMaxMs'), startMs: summary('startMs') }));
  }
}

// The store at scale: two homes seeded by bench/seed-runs.ts (a small and a large one), each
// served by the compiled server (`dist/cli/main.js start-all`), measured side by side, requests
// alternating between them. Prints one JSON line per measurement, and the medians per home:
//   start    spawn to the first 200 of /health (servers started one after the other, alternating),
//            and the server's CPU time by then
//   requests each listing and run read, one request at a time (a query the list cache has not
//            seen: `toDate` moves by a second each time)
//   cleanup  (with --cleanup-days N, the large home last) POST /dag-runs/cleanup of the runs older
//            than N days, while /health is probed every 10 ms on its own connection: the longest
//            answer is the longest stall of the server's event loop that the probe could see
//   node --import tsx bench/store-scale.ts --small <home> --large <home> [--rounds 5] [--dist dist] [--cleanup-days 60]
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (ms: number) => Math.round(ms * 100) / 100;

interface Server { process: ChildProcess; base: string; }

/** The CPU time a process has used (user and system, all threads): it does not grow while others take the cores. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startServer(dist: string, home: string, port: number): Promise<{ server: Server; startMs: number; startCpuMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [`${dist}/cli/main.js`, 'start-all', '--home', home, '--port', String(port), '--log-level', 'error', '--no-ui'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}/api/v2`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server on ${home} exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/health`).then((response) => response.status === 200, () => false);
    if (ok) return { server: { process: child, base }, startMs: performance.now() - started, startCpuMs: cpuMs(child.pid!) };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function stopServer(server: Server): Promise<void> {
  server.process.kill('SIGTERM');
  if (server.process.exitCode === null) await once(server.process, 'exit');
}

async function timed(url: string, init?: RequestInit): Promise<{ ms: number; body: any; status: number }> {
  const started = performance.now();
  const response = await fetch(url, init);
  const text = await response.text();
  const ms = performance.now() - started;
  return { ms, status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** The queries measured; `i` makes each one new to the list cache, `at` a random time in the home's window. */
const QUERIES: Record<string, (i: number, at: number) => string> = {
  'GET /dag-runs?limit=100': (i) => `/dag-runs?limit=100&toDate=${4e9 + i}`,
  'GET /dag-runs?limit=1000': (i) => `/dag-runs?limit=1000&toDate=${4e9 + i}`,
  'GET /dag-runs?status=2&limit=100': (i) => `/dag-runs?status=2&limit=100&toDate=${4e9 + i}`,
  'GET /dag-runs?name=seed-07&limit=100': (i) => `/dag-runs?name=seed-07&limit=100&toDate=${4e9 + i}`,
  'GET /dag-runs/seed-07?limit=100': (i) => `/dag-runs/seed-07?limit=100&toDate=${4e9 + i}`,
  'GET /dag-runs?limit=100&toDate=<random>': (_, at) => `/dag-runs?limit=100&toDate=${Math.floor(at / 1000)}`,
  'GET /dags?perPage=100': () => '/dags?perPage=100',
  'GET /dags/seed-07': () => '/dags/seed-07',
};

/** /health every 10 ms on a connection of its own (never behind another request) until `work` settles. */
async function probeWhile<T>(base: string, work: Promise<T>): Promise<{ result: T; probes: number[] }> {
  const agent = new Agent({ connections: 1 });
  const probes: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      const response = await request(`${base}/health`, { dispatcher: agent });
      await response.body.text();
      probes.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const result = await work;
  probing = false;
  await probe;
  await agent.close();
  return { result, probes };
}

function probeFigures(probes: number[]) {
  const sorted = [...probes].sort((a, b) => a - b);
  return { healthProbes: probes.length, healthP50Ms: round(median(probes)), healthP99Ms: round(sorted[Math.floor(sorted.length * 0.99)]), healthMaxMs: round(sorted[sorted.length - 1]), over50Ms: probes.filter((ms) => ms > 50).length };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    small: { type: 'string' }, large: { type: 'string' }, rounds: { type: 'string', default: '5' },
    dist: { type: 'string', default: 'dist' }, 'cleanup-days': { type: 'string' }, requests: { type: 'string', default: '21' },
  } });
  if (!values.small || !values.large) throw new Error('--small <home> and --large <home> are required');
  const homes = { small: values.small, large: values.large };
  const dist = values.dist!;
  const starts: Record<string, number[]> = { small: [], large: [] };
  const startCpu: Record<string, number[]> = { small: [], large: [] };
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const which of (r % 2 === 0 ? ['small', 'large'] : ['large', 'small']) as Array<keyof typeof homes>) {
      const { server, startMs, startCpuMs } = await startServer(dist, homes[which], 18_500 + r);
      starts[which].push(startMs);
      startCpu[which].push(startCpuMs);
      await stopServer(server);
    }
  }
  console.log(JSON.stringify({ measure: 'start to /health', small: starts.small.map(round), large: starts.large.map(round), medianMs: { small: round(median(starts.small)), large: round(median(starts.large)) },
    cpuMs: { small: startCpu.small, large: startCpu.large } }));

  const servers = { small: (await startServer(dist, homes.small, 18_600)).server, large: (await startServer(dist, homes.large, 18_601)).server };
  try {
    // The window each home's runs span: random runs to read are picked by a time inside it.
    const windows: Record<string, [number, number]> = {};
    for (const which of ['small', 'large'] as const) {
      const newest = (await timed(`${servers[which].base}/dag-runs?limit=1`)).body.dagRuns[0];
      // The last 80 days: seed-runs.ts spreads runs over 90, and a cleanup here takes the oldest.
      windows[which] = [Date.parse(newest.startedAt) - 80 * 86_400_000, Date.parse(newest.startedAt)];
    }
    const requests = Number(values.requests);
    const times: Record<string, Record<string, number[]>> = {};
    const add = (what: string, which: string, ms: number) => ((times[what] ??= { small: [], large: [] })[which].push(ms));
    for (let i = 0; i < requests; i++) {
      for (const which of (i % 2 === 0 ? ['small', 'large'] : ['large', 'small']) as Array<keyof typeof servers>) {
        const [from, to] = windows[which];
        const at = from + Math.random() * (to - from);
        for (const [what, query] of Object.entries(QUERIES)) {
          const answer = await timed(servers[which].base + query(i, at));
          if (answer.status !== 200) throw new Error(`${what} on ${which}: ${answer.status}`);
          add(what, which, answer.ms);
        }
        // A run at a random time of the window, read whole, then its spec.
        const pick = (await timed(`${servers[which].base}/dag-runs?limit=1&toDate=${Math.floor(at / 1000)}`)).body.dagRuns[0];
        const read = await timed(`${servers[which].base}/dag-runs/${pick.name}/${pick.dagRunId}`);
        if (read.status !== 200 || read.body.dagRun.nodes.length !== 5) throw new Error(`the run read on ${which}: ${read.status}`);
        add('GET /dag-runs/{name}/{dagRunId}', which, read.ms);
        add('GET /dag-runs/{name}/{dagRunId}/spec', which, (await timed(`${servers[which].base}/dag-runs/${pick.name}/${pick.dagRunId}/spec`)).ms);
      }
    }
    for (const [what, byHome] of Object.entries(times)) {
      console.log(JSON.stringify({ measure: what, medianMs: { small: round(median(byHome.small)), large: round(median(byHome.large)) } }));
    }

    if (values['cleanup-days'] !== undefined) {
      // The same probe over an idle server first: on a shared machine the probe waits for a core
      // now and then, and that floor is not the cleanup's.
      const idle = await probeWhile(servers.large.base, new Promise((resolve) => setTimeout(resolve, 15_000)));
      console.log(JSON.stringify({ measure: 'idle /health probes (15 s)', ...probeFigures(idle.probes) }));
      const cpuBefore = cpuMs(servers.large.process.pid!);
      const cleanup = await probeWhile(servers.large.base, timed(`${servers.large.base}/dag-runs/cleanup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ retentionDays: Number(values['cleanup-days']) }) }));
      console.log(JSON.stringify({ measure: 'cleanup', status: cleanup.result.status, removed: cleanup.result.body.removed, seconds: round(cleanup.result.ms / 1000),
        serverCpuMsPerRun: round((cpuMs(servers.large.process.pid!) - cpuBefore) / cleanup.result.body.removed), ...probeFigures(cleanup.probes) }));
    }
  } finally {
    await stopServer(servers.small);
    await stopServer(servers.large);
  }
}

await main();

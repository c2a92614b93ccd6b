// Distributed dispatch on this machine: a redis-server, a server from a build's dist/ in this
// process, and `troupe worker` processes of the same build. Three figures, one JSON line each:
// - drain: N runs of `sleep 0.5` through two workers of 8 slots each, from the first start request
//   to the last run's end, against the ideal (N * 0.5 s / 16 slots);
// - latency: from a start request to the remote step's process running (the step prints its start
//   time), sequential runs, p50 and p90;
// - stop: from a stop request to the remote run recorded aborted, five runs, p50 and the most;
// - rate: one-step runs (`true`) through one worker against the same runs on the server itself,
//   started 16 at a time, runs per second; through a worker of 100 slots (the default), then 16.
//   node bench/workers.mjs [--build <checkout>] [--drain 200] [--latency 40] [--rate 300] [--rate-slots 100,16]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const { values } = parseArgs({ options: {
  build: { type: 'string', default: '.' }, drain: { type: 'string', default: '200' },
  latency: { type: 'string', default: '40' }, rate: { type: 'string', default: '300' }, 'rate-slots': { type: 'string', default: '100,16' },
} });
const build = resolve(values.build);
const { startTroupe, homePaths } = await import(pathToFileURL(join(build, 'dist', 'main.js')).href);

const freePort = () => new Promise((done) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => done(port));
  });
});
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

const scratch = await mkdtemp(join(tmpdir(), 'troupe-bench-workers-'));
const redisPort = await freePort();
const redis = spawn('/usr/bin/redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', scratch], { stdio: 'ignore' });
const redisUrl = `redis://127.0.0.1:${redisPort}`;
await sleep(300);

const home = join(scratch, 'home');
const troupe = await startTroupe({ host: '127.0.0.1', port: 0, ...homePaths(home), home, redisUrl, ui: false, logLevel: 'warn', maxThreads: 2, queues: [{ name: 'sixteen', maxConcurrency: 16 }] });
const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
const call = async (method, path, body) => {
  const response = await fetch(base + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  return text ? JSON.parse(text) : {};
};

const workers = [];
async function startWorker(id, labels, slots) {
  const child = spawn(process.execPath, [join(build, 'dist', 'cli', 'main.js'), 'worker', '--redis', redisUrl, '--id', id, '--labels', labels, '--max-active-runs', String(slots), '--home', join(scratch, id)],
    { stdio: ['ignore', 'ignore', process.env.TIMING ? 'inherit' : 'ignore'], env: { ...process.env, TROUPE_LOG_LEVEL: 'warn' } });
  workers.push(child);
  for (;;) {
    const { workers: listed } = await call('GET', '/workers');
    if (listed.some((worker) => worker.id === id)) return;
    await sleep(50);
  }
}

async function waitAll(name, ids) {
  // Many runs: one listing per look (a look per run would load the server more than the runs do).
  if (ids.length > 4) {
    const wanted = new Set(ids);
    for (;;) {
      const { dagRuns } = await call('GET', `/dag-runs/${name}`);
      if (dagRuns.filter((run) => wanted.has(run.dagRunId) && ![0, 1, 5].includes(run.status)).length === wanted.size) return;
      await sleep(50);
    }
  }
  const pending = new Set(ids);
  while (pending.size > 0) {
    await Promise.all([...pending].map(async (id) => {
      const { dagRun } = await call('GET', `/dag-runs/${name}/${id}`);
      if (dagRun && ![0, 1, 5].includes(dagRun.status)) pending.delete(id);
    }));
    if (pending.size > 0) await sleep(20);
  }
}

/** Starts `count` runs, `inFlight` requests at a time; their ids. */
async function startMany(name, count, inFlight = 16) {
  const ids = [];
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < count) {
      next++;
      const { dagRunId } = await call('POST', `/dags/${name}/start`, {});
      ids.push(dagRunId);
    }
  }));
  return ids;
}

/**
 * CPU time so far, ms: this process, the workers still up, Redis, and the step processes that the
 * server and the workers started and reaped (from /proc: user + system ticks, own or children's).
 */
function cpuNow() {
  const ticks = (pid, children = false) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      const at = children ? 13 : 11;
      return (Number(fields[at]) + Number(fields[at + 1])) * 10;
    } catch {
      return 0;
    }
  };
  const own = process.cpuUsage();
  const up = workers.filter((worker) => worker.exitCode === null);
  return {
    server: (own.user + own.system) / 1000, worker: up.reduce((sum, worker) => sum + ticks(worker.pid), 0), redis: ticks(redis.pid),
    steps: ticks(process.pid, true) + up.reduce((sum, worker) => sum + ticks(worker.pid, true), 0),
  };
}

const write = (name, spec) => writeFile(join(home, 'dags', `${name}.yaml`), spec);
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

try {
  await startWorker('bench-a', 'pool=drain', 8);
  await startWorker('bench-b', 'pool=drain', 8);

  // Drain: 200 runs of sleep 0.5 through 16 slots.
  const drainCount = Number(values.drain);
  await write('drain', 'maxActiveRuns: -1\nworkerSelector:\n  pool: drain\nsteps:\n  - name: s\n    command: sleep 0.5\n');
  // A worker's first runs pay for its warm-up (the engine's code not yet compiled): one run per slot
  // first, as a worker that has been up a while has done.
  await waitAll('drain', await startMany('drain', 16, 16));
  const drainStart = performance.now();
  const drainIds = await startMany('drain', drainCount, 32);
  const startedAllMs = performance.now() - drainStart;
  await waitAll('drain', drainIds);
  const drainMs = performance.now() - drainStart;
  if (process.env.BENCH_DETAIL) {
    const runs = await Promise.all(drainIds.map(async (id) => (await call('GET', `/dag-runs/drain/${id}`)).dagRun));
    const spans = runs.map((run) => [Date.parse(run.startedAt), Date.parse(run.finishedAt)]);
    const first = Math.min(...spans.map(([start]) => start));
    const mean = spans.reduce((sum, [start, end]) => sum + end - start, 0) / spans.length;
    const most = Math.max(...spans.map(([start]) => spans.filter(([other, end]) => other <= start && end > start).length));
    const nodes = await Promise.all(drainIds.map(async (id) => (await call('GET', `/dag-runs/drain/${id}`)).dagRunDetails));
    const avg = (pick) => Math.round(nodes.reduce((sum, run) => sum + pick(run), 0) / nodes.length);
    const forward = avg((run) => Date.parse(run.nodes[0].startedAt) - Date.parse(run.startedAt));
    const step = avg((run) => Date.parse(run.nodes[0].finishedAt) - Date.parse(run.nodes[0].startedAt));
    const tail = avg((run) => Date.parse(run.finishedAt) - Date.parse(run.nodes[0].finishedAt));
    // Per worker slot: from one run's end to the next run's start on the same worker, sorted by time.
    const ends = nodes.map((run) => Date.parse(run.finishedAt)).sort((a, b) => a - b);
    const starts = nodes.map((run) => Date.parse(run.startedAt)).sort((a, b) => a - b).slice(16);
    const gap = Math.round(starts.reduce((sum, start, index) => sum + (start - ends[index]), 0) / starts.length);
    console.log(JSON.stringify({ startedAllMs: Math.round(startedAllMs), meanRunMs: Math.round(mean), mostAtOnce: most, forwardMs: forward, stepMs: step, tailMs: tail, endToNextStartMs: gap, firstStartMs: first - (Date.now() - (performance.now() - drainStart)) }));
  }
  const idealMs = (drainCount * 500) / 16;
  console.log(JSON.stringify({ figure: 'drain', runs: drainCount, seconds: +(drainMs / 1000).toFixed(2), idealSeconds: idealMs / 1000, overIdeal: +((drainMs / idealMs - 1) * 100).toFixed(1) + '%' }));

  if (process.env.BENCH_LOCAL_DRAIN) {
    // The same drain on the server itself, 16 at a time through a queue: what the runs cost without workers.
    await write('drain-local', 'maxActiveRuns: -1\nqueue: sixteen\nsteps:\n  - name: s\n    command: sleep 0.5\n');
    const localStart = performance.now();
    const ids = [];
    for (let index = 0; index < drainCount; index++) ids.push((await call('POST', '/dags/drain-local/enqueue', {})).dagRunId);
    await waitAll('drain-local', ids);
    console.log(JSON.stringify({ figure: 'drain-local', runs: drainCount, seconds: +((performance.now() - localStart) / 1000).toFixed(2) }));
  }

  // Latency: start request -> the remote step's process, sequential.
  await write('latency', 'workerSelector:\n  pool: drain\nsteps:\n  - name: s\n    command: date +%s%N\n');
  const delays = [];
  for (let index = 0; index < Number(values.latency); index++) {
    const sentNs = BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor((performance.now() % 1) * 1e6));
    const sent = Date.now() + (performance.now() % 1);
    const { dagRunId } = await call('POST', '/dags/latency/start', {});
    await waitAll('latency', [dagRunId]);
    const { content } = await call('GET', `/dag-runs/latency/${dagRunId}/steps/s/log`);
    const startedMs = Number(BigInt(content.trim()) / 1000n) / 1000;
    void sentNs;
    delays.push(startedMs - sent);
  }
  delays.sort((one, other) => one - other);
  console.log(JSON.stringify({ figure: 'start-to-remote-process', runs: delays.length, p50Ms: +percentile(delays, 0.5).toFixed(1), p90Ms: +percentile(delays, 0.9).toFixed(1) }));

  // Stop: from the stop request to the run recorded aborted, its step's process stopped on the worker.
  await write('stop-remote', 'workerSelector:\n  pool: drain\nsteps:\n  - name: s\n    command: sleep 30\n');
  const stops = [];
  for (let index = 0; index < 5; index++) {
    const { dagRunId } = await call('POST', '/dags/stop-remote/start', {});
    while ((await call('GET', `/dag-runs/stop-remote/${dagRunId}`)).dagRun?.nodes?.[0]?.status !== 1) await sleep(20);
    const asked = performance.now();
    await call('POST', `/dag-runs/stop-remote/${dagRunId}/stop`);
    while ((await call('GET', `/dag-runs/stop-remote/${dagRunId}`)).dagRun?.status !== 3) await sleep(5);
    stops.push(performance.now() - asked);
  }
  stops.sort((one, other) => one - other);
  console.log(JSON.stringify({ figure: 'stop-to-aborted', runs: stops.length, p50Ms: +percentile(stops, 0.5).toFixed(1), maxMs: +stops.at(-1).toFixed(1) }));

  // Rate: one-step runs through one worker against the server itself, the client keeping 16 starts in
  // flight on both. Once through a worker of the default size (100 slots: neither side has a limit
  // that holds its runs back), and once through a worker of 16 slots, as many as the starts in
  // flight: a remote run holds its slot from its placement to its end applied on the server (about
  // twice a local run's span), so there runs wait in their queue, which a local run never does here.
  const rateCount = Number(values.rate);
  await write('remote-one', 'maxActiveRuns: -1\nworkerSelector:\n  pool: rate\nsteps:\n  - name: s\n    command: "true"\n');
  await write('local-one', 'maxActiveRuns: -1\nsteps:\n  - name: s\n    command: "true"\n');
  // The server's own path warmed first, untimed (the runs so far all went to workers): each group's
  // local figure is then that of a server that has run many.
  await waitAll('local-one', await startMany('local-one', 2 * rateCount, 16));
  for (const slots of values['rate-slots'].split(',').map(Number)) {
    for (const worker of workers.splice(0)) {
      const gone = new Promise((done) => worker.once('exit', done));
      worker.kill('SIGTERM');
      await gone;
    }
    await startWorker(`bench-rate-${slots}`, 'pool=rate', slots);
    const rates = {};
    // The best of three passes each, alternating: the first of either side warms it up.
    for (const name of ['local-one', 'remote-one', 'local-one', 'remote-one', 'local-one', 'remote-one']) {
      const cpuBefore = cpuNow();
      const started = performance.now();
      await waitAll(name, await startMany(name, rateCount, 16));
      const perSecond = rateCount / ((performance.now() - started) / 1000);
      rates[name] = Math.max(rates[name] ?? 0, perSecond);
      if (process.env.BENCH_DETAIL) {
        // CPU per run, ms: this process (the server and this client), the worker, Redis, the steps' processes.
        const cpuAfter = cpuNow();
        const per = (key) => +((cpuAfter[key] - cpuBefore[key]) / rateCount).toFixed(2);
        console.log(JSON.stringify({ rate: name, slots, perSecond: +perSecond.toFixed(1), cpuMsPerRun: { server: per('server'), worker: per('worker'), redis: per('redis'), steps: per('steps') } }));
      }
    }
    console.log(JSON.stringify({ figure: 'one-step-rate', workerSlots: slots, runs: rateCount, localPerSecond: +rates['local-one'].toFixed(1), workerPerSecond: +rates['remote-one'].toFixed(1), ratio: +(rates['remote-one'] / rates['local-one']).toFixed(2) }));
  }
} finally {
  for (const worker of workers) worker.kill('SIGTERM');
  await troupe.close();
  redis.kill('SIGTERM');
  await sleep(200);
  // Files a step wrote as the server closed may still be landing: removed again until none does.
  await rm(scratch, { recursive: true, force: true, maxRetries: 5 });
}

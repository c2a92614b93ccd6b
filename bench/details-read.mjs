// The main thread's work for the details of a large finished run (docs/api.md, Large runs): a
// server started in this process from a build's dist/ on a home holding a finished run of 10,000
// steps and one of 1,000, its client on a worker thread; per request, the main thread's CPU time
// read from /proc/self/task/<pid>/schedstat (time spent waiting for a core does not count) and the
// event loop's longest stall. Each run is read `--reads` times: the first read decodes it from the
// store, the later ones find it in memory. Prints one JSON line per run.
// `--profile <file>`: a CPU profile of the main thread over the first read of the first run.
// The client is fetch, which asks for gzip (large answers come gzipped); `--identity` asks for
// the answer as it is.
//   node bench/details-read.mjs [--build <checkout>] [--reads 4] [--carrier uws|node] [--steps 10000,1000] [--profile <file>] [--fresh] [--identity]
import { cp, mkdtemp, readFile, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';

const { values } = parseArgs({ options: {
  build: { type: 'string', default: '.' }, reads: { type: 'string', default: '4' },
  carrier: { type: 'string', default: 'uws' }, steps: { type: 'string', default: '10000,1000' },
  profile: { type: 'string' }, fresh: { type: 'boolean', default: false }, identity: { type: 'boolean', default: false },
} });
const dist = (file) => import(pathToFileURL(resolve(values.build, 'dist', file)).href);
const { startTroupe, homePaths } = await dist('main.js');
const { LmdbRunStore } = await dist('store/index.js');
const sizes = values.steps.split(',').map(Number);

/** A finished run of `steps` shell steps in a chain, each node as a real run's (its step view, its log paths). */
function bigRun(name, steps) {
  const logs = `/home/troupe/.troupe/logs/${name}/dag-run_20260101_000000_019bd2b4-7c1e-7a4b-9d0e-5f6a7b8c9d0e`;
  const nodes = Array.from({ length: steps }, (_, index) => ({
    step: { name: `s${index}`, executorConfig: { type: 'shell', config: {} }, dir: '/home/troupe/.troupe/dags', command: 'true', args: [],
      commands: [{ command: 'true', args: [] }], ...(index > 0 ? { depends: [`s${index - 1}`] } : {}) },
    stdout: `${logs}/s${index}.attempt_019bd2b4.out`, stderr: `${logs}/s${index}.attempt_019bd2b4.err`, startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:01.000Z',
    status: 4, retryCount: 0, doneCount: 1, error: '', subRuns: [], subRunsRepeated: [],
  }));
  return {
    name, dagRunId: 'r1', attemptId: 'a1', rootDAGRunName: name, rootDAGRunId: 'r1', parentDAGRunName: '', parentDAGRunId: '',
    status: 4, queuedAt: '', startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:02.000Z', log: '/logs/run.log',
    params: '{}', nodes, fileName: name, createdAtMs: Date.now(),
  };
}

const tid = process.pid;
async function cpuMs() {
  const [runNs] = (await readFile(`/proc/self/task/${tid}/schedstat`, 'utf8')).split(' ');
  return Number(runNs) / 1e6;
}

const home = await mkdtemp(join(tmpdir(), 'details-read-'));
try {
  const paths = homePaths(home);
  await mkdir(paths.dagsDir, { recursive: true });
  const store = new LmdbRunStore(paths.dataDir);
  for (const [index, steps] of sizes.entries()) await store.save(bigRun(`big${index}`, steps));
  await store.close();
  const troupe = await startTroupe({ host: '127.0.0.1', port: 0, ...paths, carrier: values.carrier, maxThreads: 1, home });
  const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
  // `--fresh`: each request on a connection of its own (node:http, no agent), not one kept alive.
  const client = new Worker(values.fresh ? `
    const { parentPort } = require('node:worker_threads');
    const http = require('node:http');
    parentPort.on('message', (url) => http.get(url, { agent: false, headers: ${values.identity ? "{ 'accept-encoding': 'identity' }" : "{ 'accept-encoding': 'gzip' }"} }, (response) => {
      let bytes = 0;
      response.on('data', (chunk) => { bytes += chunk.length; });
      response.on('end', () => parentPort.postMessage({ status: response.statusCode, bytes }));
    }));` : `
    const { parentPort } = require('node:worker_threads');
    parentPort.on('message', async (url) => {
      const response = await fetch(url, ${values.identity ? "{ headers: { 'accept-encoding': 'identity' } }" : '{}'});
      const bytes = (await response.arrayBuffer()).byteLength;
      parentPort.postMessage({ status: response.status, bytes });
    });`, { eval: true });
  const get = (url) => new Promise((done) => { client.once('message', done); client.postMessage(url); });
  await get(`${base}/health`);
  // A coarse resolution: its timer runs on the main thread, and at 1 ms it cost that thread 15 - 25 ms
  // of CPU while a read waited for another thread.
  const stalls = monitorEventLoopDelay({ resolution: 20 });
  for (const [run, steps] of sizes.entries()) {
    const reads = [];
    for (let index = 0; index < Number(values.reads); index++) {
      stalls.enable();
      stalls.reset();
      const profiling = values.profile && index === 0 && run === 0 ? new Session() : undefined;
      if (profiling) {
        profiling.connect();
        await profiling.post('Profiler.enable');
        await profiling.post('Profiler.setSamplingInterval', { interval: 100 });
        await profiling.post('Profiler.start');
      }
      const before = await cpuMs();
      const answer = await get(`${base}/dag-runs/big${run}/r1`);
      const cpu = await cpuMs() - before;
      if (profiling) {
        const { profile } = await profiling.post('Profiler.stop');
        await writeFile(values.profile, JSON.stringify(profile));
        profiling.disconnect();
      }
      stalls.disable();
      if (answer.status !== 200) throw new Error(`status ${answer.status}`);
      reads.push({ cpuMs: +cpu.toFixed(1), stallMs: +(stalls.max / 1e6).toFixed(1), bytes: answer.bytes });
    }
    console.log(JSON.stringify({ build: values.build, carrier: values.carrier, steps, reads }));
  }
  await client.terminate();
  await troupe.close();
} finally {
  await rm(home, { recursive: true, force: true });
}

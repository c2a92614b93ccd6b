// breakdown: where a run's time goes. Starts the compiled server with bench/stage-probe.mjs loaded
// (it records the stage marks of src/core/stages.ts in every thread) and measures, beside the
// floor (`sh -c true` spawned by a plain node, in the same minute):
// - one-step runs, one at a time, polled every 1 ms: each stage from the start request to the
//   final record a client reads;
// - chains of 50 `true` steps: each stage of a step inside the chain;
// - fanouts of 100 parallel `sleep 0.2` steps: when the steps were dispatched, spawned and seen to
//   exit, counted from the start request;
// - the throughput workload (200 one-step runs, 16 starts in flight): CPU per run, split between
//   the main thread, the pool's threads, the server's other threads and the steps' processes.
// Usage: node --import tsx bench/breakdown.ts [runs] [checkout] (npm run build first; `npm run bench` builds).
// A checkout other than this one is measured from its own dist/ (built, with the stage marks).
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { percentile, pollUntilFinal, round, shSpawnReference, sleep, startBenchServer, type BenchServer } from './harness.ts';
import { throughput } from './throughput.ts';

interface Mark { stage: string; at: number; detail?: string; thread: 'main' | number }

const runs = Number(process.argv[2] ?? 200);
const WARMUP_RUNS = 300;
const WARMUP_CHAINS = 30;
const CHAINS = 8;
const WARMUP_FANOUTS = 2;
const FANOUTS = 4;

const marksFile = join(tmpdir(), `troupe-stages-${process.pid}.json`);
process.env.TROUPE_STAGES_OUT = marksFile;
process.env.TROUPE_BENCH_NODE_ARGS = `${process.env.TROUPE_BENCH_NODE_ARGS ?? ''} --import ${resolve(import.meta.dirname, 'stage-probe.mjs')}`;

const wall = () => performance.timeOrigin + performance.now();
const ms = (value: number) => round(value, 3);

/** One run: its start request sent, answered, and the final status seen. */
type Window = { t0: number; answered: number; seen: number };

/** Of one fanout: the first and last of each step stage, in ms from the start request. */
function fanoutSpread(marks: Mark[], window: { t0: number; seen: number }): Record<string, number> {
  const inside = marks.filter((mark) => mark.at >= window.t0 && mark.at <= window.seen);
  const spread: Record<string, number> = { wall: window.seen - window.t0 };
  for (const stage of ['step.dispatched', 'process.spawned', 'process.exited', 'step.result']) {
    const times = inside.filter((mark) => mark.stage === stage).map((mark) => mark.at - window.t0);
    spread[`${stage} first`] = Math.min(...times);
    spread[`${stage} last`] = Math.max(...times);
  }
  return spread;
}

/** The first mark of `stage` (and `detail`, when given) at or after `from`, within `marks`. */
function first(marks: Mark[], stage: string, from: number, detail?: string): Mark | undefined {
  return marks.find((mark) => mark.at >= from && mark.stage === stage && (detail === undefined || mark.detail === detail));
}

function medians(rows: Array<Record<string, number>>): Record<string, number> {
  const keys = Object.keys(rows[0] ?? {});
  return Object.fromEntries(keys.map((key) => [key, ms(percentile(rows.map((row) => row[key]).filter(Number.isFinite), 50))]));
}

/** Runs `name` (`spec`) one after another, polled every `pollMs`; the windows of those past `warmup`. */
async function timedRuns(server: BenchServer, name: string, spec: string, warmup: number, count: number, pollMs: number): Promise<Window[]> {
  await server.writeDag(name, spec);
  const windows: Window[] = [];
  for (let i = 0; i < warmup + count; i++) {
    const t0 = wall();
    const { body } = await server.post(`/dags/${name}/start`, {});
    const answered = wall();
    await pollUntilFinal(server, name, body.dagRunId, pollMs);
    if (i >= warmup) windows.push({ t0, answered, seen: wall() });
  }
  return windows;
}

const oneStepRuns = (server: BenchServer) =>
  timedRuns(server, 'bd-one', 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n', WARMUP_RUNS, runs, 1);
const chains = (server: BenchServer) =>
  timedRuns(server, 'bd-chain', 'maxActiveRuns: -1\nsteps:\n' + '  - "true"\n'.repeat(50), WARMUP_CHAINS, CHAINS, 1);
const fanouts = (server: BenchServer) =>
  timedRuns(server, 'bd-fanout', 'type: graph\nmaxActiveRuns: -1\nmaxActiveSteps: 100\nsteps:\n' + '  - sleep 0.2\n'.repeat(100), WARMUP_FANOUTS, FANOUTS, 5);

/** Why runs could not be followed through their stages: the first stage not found, counted. */
const unmatched = new Map<string, number>();

/** One run's stages, from the marks of its window. */
function runStages(marks: Mark[], window: Window): Record<string, number> | undefined {
  const inRun = marks.filter((mark) => mark.at >= window.t0 && mark.at <= window.seen);
  const received = first(inRun, 'request.received', window.t0, 'POST');
  const admitted = received && first(inRun, 'run.admitted', received.at);
  const durable = admitted && first(inRun, 'record.first.durable', admitted.at);
  const answered = durable && first(inRun, 'request.answered', durable.at, 'POST /dags/:fileName/start');
  const dispatched = received && first(inRun, 'step.dispatched', received.at);
  const taken = dispatched && first(inRun, 'step.received', dispatched.at);
  const spawned = taken && first(inRun, 'process.spawned', taken.at);
  const exited = spawned && first(inRun, 'process.exited', spawned.at);
  const returned = exited && first(inRun, 'step.returned', exited.at);
  const result = returned && first(inRun, 'step.result', returned.at);
  const issued = result && first(inRun, 'record.final.issued', result.at);
  const final = issued && first(inRun, 'record.final.durable', issued.at);
  if (!received || !admitted || !durable || !answered || !dispatched || !taken || !spawned || !exited || !returned || !result || !issued || !final) {
    const missing = !received ? 'request.received' : !admitted ? 'run.admitted' : !durable ? 'record.first.durable' : !answered ? 'request.answered'
      : !dispatched ? 'step.dispatched' : !taken ? 'step.received' : !spawned ? 'process.spawned' : !exited ? 'process.exited'
        : !returned ? 'step.returned' : !result ? 'step.result' : !issued ? 'record.final.issued' : 'record.final.durable';
    unmatched.set(missing, (unmatched.get(missing) ?? 0) + 1);
    return undefined;
  }
  return {
    'request: client send to handler': received.at - window.t0,
    'admission: handler to admitted': admitted.at - received.at,
    'first record: admitted to durable': durable.at - admitted.at,
    'answer: durable to client': window.answered - durable.at,
    'hand-off: admitted to dispatched': dispatched.at - admitted.at,
    'hand-off: dispatched to worker': taken.at - dispatched.at,
    'process start: worker to spawned': spawned.at - taken.at,
    'process: spawned to exit seen': exited.at - spawned.at,
    'result: exit to step returned': returned.at - exited.at,
    'result: returned to main thread': result.at - returned.at,
    'final record: result to issued': issued.at - result.at,
    'final record: issued to durable': final.at - issued.at,
    'read: durable to client sees it': window.seen - final.at,
    'total: client send to client sees final': window.seen - window.t0,
  };
}

/** The stages of each step inside a chain: from the previous step's result on the main thread. */
function chainStepStages(marks: Mark[], window: { t0: number; seen: number }): Array<Record<string, number>> {
  const inRun = marks.filter((mark) => mark.at >= window.t0 && mark.at <= window.seen);
  const rows: Array<Record<string, number>> = [];
  let previous = first(inRun, 'step.result', window.t0);
  while (previous) {
    const dispatched = first(inRun, 'step.dispatched', previous.at);
    const taken = dispatched && first(inRun, 'step.received', dispatched.at);
    const spawned = taken && first(inRun, 'process.spawned', taken.at);
    const exited = spawned && first(inRun, 'process.exited', spawned.at);
    const returned = exited && first(inRun, 'step.returned', exited.at);
    const result = returned && first(inRun, 'step.result', returned.at);
    if (!result) break;
    rows.push({
      'between steps: result to next dispatched': dispatched.at - previous.at,
      'hand-off: dispatched to worker': taken.at - dispatched.at,
      'process start: worker to spawned': spawned.at - taken.at,
      'process: spawned to exit seen': exited.at - spawned.at,
      'result: exit to step returned': returned.at - exited.at,
      'result: returned to main thread': result.at - returned.at,
      'step: result to result': result.at - previous.at,
    });
    previous = result;
  }
  return rows;
}

/** CPU seconds (user + system) of each thread of `pid`, and of its reaped children. */
async function cpuOf(pid: number): Promise<{ threads: Map<number, number>; children: number }> {
  const tick = 100;
  const threads = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    try {
      const fields = (await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
      threads.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / tick);
    } catch {
      // the thread ended
    }
  }
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
  return { threads, children: (Number(fields[13]) + Number(fields[14])) / tick };
}

async function throughputCpu(server: BenchServer): Promise<Record<string, unknown>> {
  const total = 1000;
  await throughput(server, 200, 16, 'bd-throughput-warm');
  const before = await cpuOf(server.pid);
  const result = await throughput(server, total, 16, 'bd-throughput');
  await sleep(200);
  const after = await cpuOf(server.pid);
  const threads = JSON.parse(await readFile(`${marksFile}.threads`, 'utf8')) as { main: number; workers: number[] };
  const delta = (tid: number) => (after.threads.get(tid) ?? 0) - (before.threads.get(tid) ?? 0);
  let all = 0;
  for (const tid of after.threads.keys()) all += delta(tid);
  const main = delta(threads.main);
  const workers = threads.workers.reduce((sum, tid) => sum + delta(tid), 0);
  const perRun = (seconds: number) => ms((seconds * 1000) / total);
  return {
    runs: total, runsPerSec: result.runsPerSec, failed: result.failed,
    cpuMsPerRun: {
      mainThread: perRun(main), workerThreads: perRun(workers), otherThreads: perRun(all - main - workers),
      stepProcesses: perRun(after.children - before.children),
    },
    note: 'CPU read from /proc in 10 ms ticks over the whole workload; worker threads are those that sent marks (the step pool).',
  };
}

const reference = await shSpawnReference();
const server = await startBenchServer(process.argv[3] ? resolve(process.argv[3]) : undefined);
let single: Window[];
let chained: Window[];
let fanned: Window[];
let cpu: Record<string, unknown>;
try {
  single = await oneStepRuns(server);
  chained = await chains(server);
  fanned = await fanouts(server);
  cpu = await throughputCpu(server);
  await sleep(100);
} finally {
  await server.stop();
}
const after = await shSpawnReference();
const { marks } = JSON.parse(await readFile(marksFile, 'utf8')) as { marks: Mark[] };
await rm(marksFile, { force: true });
await rm(`${marksFile}.threads`, { force: true });
marks.sort((a, b) => a.at - b.at);
const oneStep = single.map((window) => runStages(marks, window)).filter((row) => row !== undefined);
const steps = chained.flatMap((window) => chainStepStages(marks, window));
console.log(JSON.stringify({
  workload: 'breakdown',
  floor: { shSpawnMsBefore: round(reference.spawnMs, 3), shSpawnMsAfter: round(after.spawnMs, 3) },
  oneStepRun: { runs: oneStep.length, of: single.length, ...(unmatched.size > 0 ? { unmatched: Object.fromEntries(unmatched) } : {}), medianMs: medians(oneStep) },
  chainStep: { steps: steps.length, chains: chained.length, chainMedianMs: ms(percentile(chained.map((w) => w.seen - w.t0), 50)), medianMs: medians(steps) },
  fanout: { runs: fanned.length, steps: 100, medianMs: medians(fanned.map((window) => fanoutSpread(marks, window))) },
  throughput: cpu,
}, null, 2));

// events: what following the event stream costs and gives, side by side in the same minutes.
// - The throughput workload (200 one-step runs, 16 starts in flight) alone and with 100 clients
//   following every event over Server-Sent Events, alternating, 3 rounds each: the ratio of the
//   medians is what the clients cost.
// - How long an event takes to reach those clients: the server's own figure, from an event's commit
//   to its write to each client's connection (the troupe_event_delivery_seconds histogram, read
//   before and after each followed round); and what the clients see, from the event's `at` to its
//   arrival. `at` is stamped when the transition happens, before the record and the event are
//   written, so that figure also holds the commit's own time: an upper bound of commit-to-client.
// - A one-step run started with start-sync against one started and then polled every 1 ms: the
//   time until the client knows it ended, alternating, 200 runs each after 100 warm-up runs.
import { Worker } from 'node:worker_threads';
import { request } from 'undici';
import { percentile, pollUntilFinal, round, sleep, type BenchServer } from './harness.ts';
import { throughput } from './throughput.ts';

const SUBSCRIBERS = 100;
const ROUNDS = 3;
const SYNC_RUNS = 200;
const SYNC_WARMUP = 100;

interface Followers {
  /** Stops the clients; resolves with how long each event took to reach each of them. */
  close(): Promise<number[]>;
}

// The clients run on their own thread with plain node:http readers, so that parsing a quarter of
// a million messages does not slow the thread that drives the workload, and the delivery figure
// is the server's, not the time the driver's busy event loop took to look.
const FOLLOWER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, count } = workerData;
const delays = [];
const requests = [];
let open = 0;
for (let index = 0; index < count; index++) {
  const request = http.get(url, { agent: false }, (response) => {
    response.setEncoding('utf8');
    let rest = '';
    if (++open === count) parentPort.postMessage({ open });
    response.on('data', (text) => {
      const now = Date.now();
      rest += text;
      const complete = rest.lastIndexOf('\\n\\n');
      if (complete < 0) return;
      let at = rest.indexOf('"at":"');
      while (at >= 0 && at < complete) {
        const end = rest.indexOf('"', at + 6);
        delays.push(now - Date.parse(rest.slice(at + 6, end)));
        at = rest.indexOf('"at":"', end);
      }
      rest = rest.slice(complete + 2);
    });
    response.on('error', () => {});
  });
  request.on('error', () => {});
  requests.push(request);
}
parentPort.on('message', () => {
  for (const request of requests) request.destroy();
  parentPort.postMessage({ delays });
});
`;

/** `count` clients of GET /events, each timing every event it reads against the event's `at`. */
async function follow(server: BenchServer, count: number): Promise<Followers> {
  const worker = new Worker(FOLLOWER, { eval: true, workerData: { url: `${server.base}/events`, count } });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    close: () => new Promise<number[]>((resolve, reject) => {
      worker.once('message', (message: { delays: number[] }) => {
        void worker.terminate();
        resolve(message.delays);
      });
      worker.once('error', reject);
      worker.postMessage('close');
    }),
  };
}

export async function events(server: BenchServer): Promise<Record<string, unknown>> {
  const alone: number[] = [];
  const followed: number[] = [];
  const delays: number[] = [];
  let delivered = 0;
  const commitToWrite = new Map<number, number>();
  for (let index = 0; index < ROUNDS; index++) {
    alone.push((await throughput(server, 200, 16, `bench-alone-${index}`)).runsPerSec as number);
    const before = await deliveryBuckets(server);
    const followers = await follow(server, SUBSCRIBERS);
    await sleep(200);
    followed.push((await throughput(server, 200, 16, `bench-followed-${index}`)).runsPerSec as number);
    await sleep(300);
    const taken = await followers.close();
    for (const [le, count] of await deliveryBuckets(server)) commitToWrite.set(le, (commitToWrite.get(le) ?? 0) + count - (before.get(le) ?? 0));
    for (const ms of taken) delays.push(ms);
    delivered += taken.length;
  }
  const name = 'bench-sync';
  await server.writeDag(name, 'maxActiveRuns: -1\nsteps:\n  - name: one\n    command: "true"\n');
  const sync: number[] = [];
  const polled: number[] = [];
  for (let index = 0; index < SYNC_WARMUP + SYNC_RUNS; index++) {
    const order = index % 2 === 0 ? [startSync, startAndPoll] : [startAndPoll, startSync];
    for (const way of order) {
      const ms = await way(server, name);
      if (index >= SYNC_WARMUP) (way === startSync ? sync : polled).push(ms);
    }
  }
  const median = (values: number[]) => percentile(values, 50);
  return {
    workload: 'events', subscribers: SUBSCRIBERS, rounds: ROUNDS,
    runsPerSecAlone: alone, runsPerSecFollowed: followed, followedOverAlone: round(median(followed) / median(alone)),
    eventsDelivered: delivered,
    commitToWriteP99UnderMs: bucketPercentile(commitToWrite, 99) * 1000, commitToWriteWithin50Ms: round(share(commitToWrite, 0.05), 4),
    stampToClientP50Ms: percentile(delays, 50), stampToClientP99Ms: percentile(delays, 99), stampToClientMaxMs: delays.reduce((max, value) => Math.max(max, value), 0),
    startSyncP50Ms: round(median(sync)), pollEvery1msP50Ms: round(median(polled)), startSyncP95Ms: round(percentile(sync, 95)), pollEvery1msP95Ms: round(percentile(polled, 95)),
    targets: { followedOverAlone: 0.9, commitToWriteP99UnderMs: 50, startSync: 'sooner than polling' },
  };
}

/** The server's histogram of commit-to-write delays: cumulative counts by upper bound (seconds). */
async function deliveryBuckets(server: BenchServer): Promise<Map<number, number>> {
  const text = await (await request(`${server.base}/metrics`)).body.text();
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(/^troupe_event_delivery_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) {
    buckets.set(match[1] === '+Inf' ? Infinity : Number(match[1]), Number(match[2]));
  }
  return buckets;
}

/** The upper bound of the bucket that holds the p-th percentile. */
function bucketPercentile(buckets: Map<number, number>, p: number): number {
  const total = buckets.get(Infinity) ?? 0;
  for (const [le, count] of [...buckets].sort(([a], [b]) => a - b)) if (count >= total * p / 100) return le;
  return Infinity;
}

function share(buckets: Map<number, number>, within: number): number {
  return (buckets.get(within) ?? 0) / (buckets.get(Infinity) || 1);
}

async function startSync(server: BenchServer, name: string): Promise<number> {
  const t0 = performance.now();
  const response = await request(`${server.base}/dags/${name}/start-sync`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ timeout: 60 }),
  });
  const body = await response.body.json() as { dagRun?: { status: number } };
  if (response.statusCode !== 200 || body.dagRun?.status !== 4) throw new Error(`start-sync answered ${response.statusCode}`);
  return performance.now() - t0;
}

async function startAndPoll(server: BenchServer, name: string): Promise<number> {
  const t0 = performance.now();
  const { body } = await server.post(`/dags/${name}/start`, {});
  const run = await pollUntilFinal(server, name, body.dagRunId, 1);
  if (run.status !== 4) throw new Error(`run ended ${run.statusLabel}`);
  return performance.now() - t0;
}

// events: what following the event stream costs and gives, side by side in the same minutes.
// - The throughput workload (200 one-step runs, 16 starts in flight) alone and with 100 clients
//   following every event over Server-Sent Events, alternating, 3 rounds each: the ratio of the
//   medians is what the clients cost.
// - How long an event takes to reach those clients: from its `at` (stamped before its commit, so
//   the figure is an upper bound of commit-to-client), p50 and p99 over every event and client.
// - A one-step run started with start-sync against one started and then polled every 1 ms: the
//   time until the client knows it ended, alternating, 200 runs each after 100 warm-up runs.
import { request } from 'undici';
import { percentile, pollUntilFinal, round, sleep, type BenchServer } from './harness.ts';
import { throughput } from './throughput.ts';

const SUBSCRIBERS = 100;
const ROUNDS = 3;
const SYNC_RUNS = 200;
const SYNC_WARMUP = 100;

interface Followers {
  delaysMs: number[];
  events: number;
  close(): void;
}

/** `count` clients of GET /events, each timing every event it reads against the event's `at`. */
async function follow(server: BenchServer, count: number): Promise<Followers> {
  const abort = new AbortController();
  const followers: Followers = { delaysMs: [], events: 0, close: () => abort.abort() };
  await Promise.all(Array.from({ length: count }, async () => {
    const response = await fetch(`${server.base}/events`, { signal: abort.signal });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    void (async () => {
      let rest = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          const now = Date.now();
          rest += decoder.decode(value, { stream: true });
          let at = rest.indexOf('"at":"');
          while (at >= 0) {
            const end = rest.indexOf('"', at + 6);
            if (end < 0) break;
            followers.delaysMs.push(now - Date.parse(rest.slice(at + 6, end)));
            followers.events++;
            at = rest.indexOf('"at":"', end);
          }
          rest = rest.slice(rest.lastIndexOf('\n\n') + 2);
        }
      } catch {
        // Closed by the bench.
      }
    })();
  }));
  return followers;
}

export async function events(server: BenchServer): Promise<Record<string, unknown>> {
  const alone: number[] = [];
  const followed: number[] = [];
  const delays: number[] = [];
  let delivered = 0;
  for (let index = 0; index < ROUNDS; index++) {
    alone.push((await throughput(server, 200, 16, `bench-alone-${index}`)).runsPerSec as number);
    const followers = await follow(server, SUBSCRIBERS);
    await sleep(200);
    followed.push((await throughput(server, 200, 16, `bench-followed-${index}`)).runsPerSec as number);
    await sleep(300);
    followers.close();
    delays.push(...followers.delaysMs);
    delivered += followers.events;
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
    eventsDelivered: delivered, deliveryP50Ms: percentile(delays, 50), deliveryP99Ms: percentile(delays, 99), deliveryMaxMs: delays.reduce((max, value) => Math.max(max, value), 0),
    startSyncP50Ms: round(median(sync)), pollEvery1msP50Ms: round(median(polled)), startSyncP95Ms: round(percentile(sync, 95)), pollEvery1msP95Ms: round(percentile(polled, 95)),
    targets: { followedOverAlone: 0.9, deliveryP99Ms: 50, startSync: 'sooner than polling' },
  };
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

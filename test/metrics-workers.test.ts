// The workers in the metrics and in `troupe status`, with distributed dispatch: a real
// redis-server, the real server with a Redis URL and real `troupe worker` processes. The gauges
// count the workers by health, each worker's slots and busy slots (a worker that left is gone from
// the output), and the active runs on workers; `troupe status` names a run's worker, over HTTP and
// embedded. Without a Redis URL none of these series exist (test/metrics.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { troupe } from './cli-run.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { WORKER_METRICS, dashboardQueries, scrape } from './support/scrape-metrics.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';

const missing = redisMissing();

describe('workers in the metrics and in troupe status', { skip: missing && !process.env.CI ? missing : false }, () => {
  let redis: RedisServer;
  let server: TestServer;
  const workers: WorkerProcess[] = [];
  const listed = listedOn(() => server);
  const startWorker = async (id: string, labels: string, maxActiveRuns: number) => {
    const worker = await startWorkerProcess({ id, redisUrl: redis.url, labels, maxActiveRuns }, listed);
    workers.push(worker);
    return worker;
  };
  /** Polls the metrics until `check` holds on a scrape; fails with the last text. */
  const scrapeUntil = async (what: string, check: (metrics: Awaited<ReturnType<typeof scrape>>) => boolean) => {
    let text = '';
    const seen = await waitUntil(async () => {
      const metrics = await scrape(server);
      text = metrics.text;
      return check(metrics);
    }, 20_000);
    assert.ok(seen, `${what}; the last scrape:\n${text}`);
  };
  const sample = (metrics: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string> = {}) =>
    metrics.samples.find((one) => one.name === name && Object.entries(labels).every(([key, value]) => one.labels[key] === value))?.value;

  before(async () => {
    if (missing) throw new Error(missing);
    redis = await startRedis();
    server = await startTestServer('uws', { redisUrl: redis.url });
    await startWorker('metrics-w1', 'pool=metrics,zone=eu', 3);
  });

  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await server?.close();
    await redis?.stop();
  });

  test('the workers by health and each worker\'s slots, gauges documented and on the dashboard', async () => {
    await scrapeUntil('one healthy worker with 3 slots', (metrics) => sample(metrics, 'troupe_workers', { health: 'healthy' }) === 1
      && sample(metrics, 'troupe_worker_slots', { worker: 'metrics-w1' }) === 3);
    const metrics = await scrape(server);
    // Every health is listed, at 0 when no worker has it.
    assert.equal(metrics.value('troupe_workers', { health: 'warning' }), 0);
    assert.equal(metrics.value('troupe_workers', { health: 'unhealthy' }), 0);
    assert.equal(metrics.value('troupe_worker_busy_slots', { worker: 'metrics-w1' }), 0);
    assert.equal(metrics.value('troupe_runs_on_workers'), 0);
    for (const name of WORKER_METRICS) assert.equal(metrics.types.get(name), 'gauge', name);
    const docs = await readFile(join(import.meta.dirname, '..', 'docs', 'metrics.md'), 'utf8');
    assert.deepEqual(WORKER_METRICS.filter((name) => !docs.includes(`\`${name}\``)), []);
    const queried = await dashboardQueries();
    assert.deepEqual(WORKER_METRICS.filter((name) => !queried.has(name)), []);
  });

  test('a run on a worker counts in troupe_runs_on_workers while it runs, and no longer once it ended', async () => {
    await server.writeDag('mw-sleeps', 'workerSelector:\n  pool: metrics\nsteps:\n  - name: s\n    command: sleep 1\n');
    const started = await server.call('POST', '/dags/mw-sleeps/start', {});
    assert.equal(started.status, 200, started.text);
    await scrapeUntil('the run on the worker counted', (metrics) => sample(metrics, 'troupe_runs_on_workers') === 1);
    const run = await server.waitForRun('mw-sleeps', started.body.dagRunId);
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(run.workerId, 'metrics-w1');
    await scrapeUntil('the ended run no longer counted', (metrics) => sample(metrics, 'troupe_runs_on_workers') === 0);
    // A run this server runs itself is not on a worker.
    await server.writeDag('mw-here', 'steps:\n  - name: s\n    command: echo here\n');
    assert.equal((await server.startAndWait('mw-here')).workerId, undefined);
    assert.equal((await scrape(server)).value('troupe_runs_on_workers'), 0);
  });

  test('a worker that left is gone from the output', async () => {
    const second = await startWorker('metrics-w2', 'pool=other', 2);
    await scrapeUntil('two healthy workers, the second with 2 slots', (metrics) => sample(metrics, 'troupe_workers', { health: 'healthy' }) === 2
      && sample(metrics, 'troupe_worker_slots', { worker: 'metrics-w2' }) === 2);
    assert.equal(await second.stop(), 0);
    await scrapeUntil('the second worker gone', (metrics) => sample(metrics, 'troupe_worker_slots', { worker: 'metrics-w2' }) === undefined
      && sample(metrics, 'troupe_worker_busy_slots', { worker: 'metrics-w2' }) === undefined
      && sample(metrics, 'troupe_workers', { health: 'healthy' }) === 1);
    assert.equal((await scrape(server)).value('troupe_worker_slots', { worker: 'metrics-w1' }), 3);
  });

  test('troupe status names the run\'s worker, in its lines and in --json as the API gives it; over HTTP, then embedded', async () => {
    await server.writeDag('mw-status', 'workerSelector:\n  zone: eu\nsteps:\n  - name: s\n    command: echo on a worker\n');
    const onWorker = await server.startAndWait('mw-status', { dagRunId: 'w1' });
    assert.equal(onWorker.workerId, 'metrics-w1');
    await server.writeDag('mw-local', 'steps:\n  - name: s\n    command: echo here\n');
    await server.startAndWait('mw-local', { dagRunId: 'l1' });
    const home = ['--home', server.home];
    const expectations = async () => {
      const lines = await troupe(['status', 'mw-status', '-r', 'w1', ...home]);
      assert.equal(lines.code, 0, lines.stderr);
      assert.match(lines.stdout, /^dag-run mw-status w1: succeeded\n {2}started [^\n]+\n {2}worker metrics-w1\n/);
      const json = await troupe(['status', 'mw-status', '-r', 'w1', '--json', ...home]);
      assert.equal(json.code, 0, json.stderr);
      assert.equal(JSON.parse(json.stdout).dagRun.workerId, 'metrics-w1');
      const local = await troupe(['status', 'mw-local', '-r', 'l1', '--json', ...home]);
      assert.equal(local.code, 0, local.stderr);
      assert.ok(!('workerId' in JSON.parse(local.stdout).dagRun), local.stdout);
      assert.doesNotMatch((await troupe(['status', 'mw-local', '-r', 'l1', ...home])).stdout, /\n {2}worker /);
    };
    const api = (await server.call('GET', '/dag-runs/mw-status/w1')).body.dagRun;
    assert.equal(api.workerId, 'metrics-w1');
    await expectations();
    // The server stops (its home kept): the command reads the stored records itself.
    await server.troupe.close();
    await expectations();
  });
});

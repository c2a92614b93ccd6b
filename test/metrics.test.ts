// GET /api/v2/metrics on the real server: every metric of docs/metrics.md with the troupe_ prefix,
// gauges that agree with GET /dag-runs?status=1 and GET /queues at the same moment, totals and
// histograms counted from the engine's events, request durations by route template, and the
// default Node.js process metrics.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Router } from '../src/http/router.ts';
import { opsRoutes } from '../src/http/routes/ops.ts';
import { checkedFetch, startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { WORKER_METRICS, dashboardQueries, scrape } from './support/scrape-metrics.ts';
import { SseClient } from './support/sse-client.ts';

/** A DAG whose one step waits until `gate` exists. */
const gated = (gate: string) => `maxActiveRuns: 1\nsteps:\n  - name: wait\n    command: while [ ! -e "${gate}" ]; do sleep 0.02; done\n`;

describe('metrics', () => {
  let server: TestServer;
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'troupe-metrics-'));
    server = await startTestServer('uws');
  });
  after(async () => {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  test('every metric of the spec, with the troupe_ prefix, its type and labels, and the process metrics', async () => {
    const metrics = await scrape(server);
    assert.match(metrics.contentType ?? '', /^text\/plain; version=0\.0\.4/);
    const expected: Array<[string, string]> = [
      ['troupe_info', 'gauge'], ['troupe_uptime_seconds', 'gauge'], ['troupe_dag_runs_currently_running', 'gauge'],
      ['troupe_dag_runs_queued_total', 'gauge'], ['troupe_dag_runs_total', 'counter'], ['troupe_dags_total', 'gauge'],
      ['troupe_scheduler_running', 'gauge'], ['troupe_dag_run_duration_seconds', 'histogram'],
      ['troupe_dag_run_queue_wait_seconds', 'histogram'], ['troupe_step_duration_seconds', 'histogram'],
      ['troupe_http_request_duration_seconds', 'histogram'],
    ];
    for (const [name, type] of expected) assert.equal(metrics.types.get(name), type, name);
    const health = (await server.call('GET', '/health')).body;
    const [info] = metrics.samples.filter((sample) => sample.name === 'troupe_info');
    assert.equal(info.value, 1);
    assert.equal(info.labels.version, health.version);
    assert.equal(info.labels.go_version, process.version);
    assert.ok(Number.isFinite(Date.parse(info.labels.build_date)), info.labels.build_date);
    assert.ok(metrics.value('troupe_uptime_seconds') >= 0);
    assert.equal(metrics.value('troupe_scheduler_running'), 1);
    // Every status is there from the start, at 0 on a new server.
    for (const status of ['succeeded', 'failed', 'canceled', 'partially_succeeded']) {
      assert.equal(metrics.value('troupe_dag_runs_total', { status }), 0, status);
    }
    for (const name of ['troupe_process_cpu_user_seconds_total', 'troupe_process_resident_memory_bytes', 'troupe_nodejs_eventloop_lag_seconds', 'troupe_nodejs_heap_size_used_bytes']) {
      assert.ok(metrics.types.has(name), name);
    }
    assert.deepEqual([...metrics.types.keys()].filter((name) => !name.startsWith('troupe_')), []);
    // No Redis URL: no worker series at all, not even at 0.
    assert.deepEqual(WORKER_METRICS.filter((name) => metrics.types.has(name) || metrics.text.includes(name)), []);
  });

  test('the metrics route is public: authentication never applies to it (docs/api.md)', async () => {
    const router = new Router();
    opsRoutes(router);
    assert.equal(router.match('GET', '/metrics')?.public, true);
    assert.equal(router.match('GET', '/services/resources/history')?.public, false);
    const head = await checkedFetch(`${server.base}/metrics`, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  test('running and queued agree with GET /dag-runs?status=1 and GET /queues at the same moment', async () => {
    const gate = join(scratch, 'gate');
    await server.writeDag('held', gated(gate));
    const first = await server.call('POST', '/dags/held/start', { dagRunId: 'h1' });
    assert.equal(first.status, 200, first.text);
    await server.waitForRun('held', 'h1', (run) => run.status === 1);
    for (const id of ['h2', 'h3']) assert.equal((await server.call('POST', '/dags/held/enqueue', { dagRunId: id })).status, 200);
    const agree = async () => {
      const metrics = await scrape(server);
      const running = (await server.call('GET', '/dag-runs?status=1')).body.dagRuns.length;
      const queues = (await server.call('GET', '/queues')).body.queues;
      const queued = queues.reduce((sum: number, queue: any) => sum + queue.summary.queued, 0);
      const queuedRuns = (await server.call('GET', '/dag-runs?status=5')).body.dagRuns.length;
      assert.equal(metrics.value('troupe_dag_runs_currently_running'), running);
      assert.equal(metrics.value('troupe_dag_runs_queued_total'), queued);
      assert.equal(queued, queuedRuns);
      return { running, queued };
    };
    assert.deepEqual(await agree(), { running: 1, queued: 2 });
    await writeFile(gate, '');
    for (const id of ['h1', 'h2', 'h3']) assert.equal((await server.waitForRun('held', id)).status, 4);
    assert.deepEqual(await agree(), { running: 0, queued: 0 });
    const metrics = await scrape(server);
    // h2 and h3 waited in the queue; h1 started at once.
    assert.equal(metrics.value('troupe_dag_run_queue_wait_seconds_count'), 2);
  });

  test('totals by status, and the run and step histograms, match the runs the API lists', async () => {
    await server.writeDag('ok', 'steps:\n  - name: a\n    command: echo a\n  - name: b\n    command: echo b\n');
    await server.writeDag('bad', 'steps:\n  - name: fails\n    command: exit 3\n');
    await server.writeDag('partial', 'steps:\n  - name: fails\n    command: exit 1\n    continueOn:\n      failure: true\n  - name: fine\n    command: echo fine\n');
    await server.writeDag('caller', 'steps:\n  - name: call-ok\n    call: ok\n');
    const gate = join(scratch, 'gate2');
    await server.writeDag('blocked', gated(gate));
    for (const name of ['ok', 'ok', 'bad', 'partial', 'caller']) await server.startAndWait(name);
    // A dequeued run is recorded aborted: the spec's canceled.
    await server.call('POST', '/dags/blocked/start', { dagRunId: 'b1' });
    await server.waitForRun('blocked', 'b1', (run) => run.status === 1);
    await server.call('POST', '/dags/blocked/enqueue', { dagRunId: 'b2' });
    assert.equal((await server.call('GET', '/dag-runs/blocked/b2/dequeue')).status, 200);
    await writeFile(gate, '');
    await server.waitForRun('blocked', 'b1');

    const metrics = await scrape(server);
    const listed = (status: number) => server.call('GET', `/dag-runs?status=${status}`).then((response) => response.body.dagRuns);
    // A fresh server: its totals are the root runs the API lists by status (sub DAG runs are not listed, nor counted).
    const labels: Array<[string, number]> = [['succeeded', 4], ['failed', 2], ['canceled', 3], ['partially_succeeded', 6]];
    for (const [status, code] of labels) {
      const runs = await listed(code);
      assert.equal(metrics.value('troupe_dag_runs_total', { status }), runs.length, status);
      // Each run that started has a duration; the dequeued one never started.
      const started = runs.filter((run: any) => run.startedAt !== '').length;
      assert.equal(metrics.value('troupe_dag_run_duration_seconds_count', { status }), started, status);
    }
    assert.equal(metrics.value('troupe_dag_runs_total', { status: 'canceled' }), 1);
    assert.equal(metrics.value('troupe_dag_runs_total', { status: 'failed' }), 1);
    assert.equal(metrics.value('troupe_dag_runs_total', { status: 'partially_succeeded' }), 1);
    // Steps of every run, sub DAG runs' included: every node that ended, as the runs' details show them.
    const allRuns = [...await listed(4), ...await listed(2), ...await listed(6), ...await listed(3)];
    const ended = new Map<number, number>();
    for (const run of allRuns) {
      const details = (await server.call('GET', `/dag-runs/${run.name}/${run.dagRunId}`)).body.dagRun;
      for (const node of details.nodes) ended.set(node.status, (ended.get(node.status) ?? 0) + 1);
      for (const node of details.nodes) {
        for (const sub of node.subRuns ?? []) {
          const child = (await server.call('GET', `/dag-runs/${run.name}/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}`)).body.dagRunDetails;
          for (const childNode of child.nodes) ended.set(childNode.status, (ended.get(childNode.status) ?? 0) + 1);
        }
      }
    }
    assert.equal(metrics.value('troupe_step_duration_seconds_count', { status: 'succeeded' }), ended.get(4));
    assert.equal(metrics.value('troupe_step_duration_seconds_count', { status: 'failed' }), ended.get(2));
  });

  test('request durations are labelled with the route template and status code, never the raw path', async () => {
    await server.writeDag('routed', 'steps:\n  - name: a\n    command: echo a\n');
    const run = await server.startAndWait('routed');
    await server.call('GET', `/dag-runs/routed/${run.dagRunId}`);
    await server.call('GET', '/dag-runs/routed/no-such-run');
    await server.call('GET', '/no/such/route/here');
    await checkedFetch(`${server.base}/dags`, { method: 'PROPFIND' }).catch(() => undefined);
    const metrics = await scrape(server);
    assert.ok(metrics.value('troupe_http_request_duration_seconds_count', { method: 'GET', route: '/dag-runs/:name/:dagRunId', status_code: '200' }) >= 1);
    assert.ok(metrics.value('troupe_http_request_duration_seconds_count', { method: 'GET', route: '/dag-runs/:name/:dagRunId', status_code: '404' }) >= 1);
    assert.ok(metrics.value('troupe_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }) >= 1);
    const routes = new Set(metrics.samples.filter((sample) => sample.name === 'troupe_http_request_duration_seconds_count').map((sample) => sample.labels.route));
    assert.deepEqual([...routes].filter((route) => route !== 'unmatched' && !route.startsWith('/')), []);
    assert.ok(![...routes].some((route) => route.includes(run.dagRunId)), [...routes].join(', '));
    const methods = new Set(metrics.samples.filter((sample) => sample.name === 'troupe_http_request_duration_seconds_count').map((sample) => sample.labels.method));
    assert.ok(!methods.has('PROPFIND'));
  });

  test('troupe_dags_total counts the DAGs GET /dags lists', async () => {
    const metrics = await scrape(server);
    const listed = (await server.call('GET', '/dags?perPage=1000')).body.pagination.totalRecords;
    assert.equal(metrics.value('troupe_dags_total'), listed);
  });

  test('docs/metrics.md lists every metric served, and the Grafana dashboard queries only metrics that exist', async () => {
    const served = [...(await scrape(server)).types.keys()];
    const docs = await readFile(join(import.meta.dirname, '..', 'docs', 'metrics.md'), 'utf8');
    assert.deepEqual(served.filter((name) => !docs.includes(`\`${name}\``)), []);
    const queried = await dashboardQueries();
    assert.deepEqual([...queried].filter((name) => !served.includes(name) && !WORKER_METRICS.includes(name)), []);
    // Every metric of troupe's own (not the process's) has a panel.
    const own = served.filter((name) => !/^troupe_(process|nodejs)_/.test(name) && name !== 'troupe_info');
    assert.deepEqual(own.filter((name) => !queried.has(name)), []);
  });
});

test('the node:http carrier serves the metrics the same way', async () => {
  const server = await startTestServer('node');
  try {
    const metrics = await scrape(server);
    assert.match(metrics.contentType ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal(metrics.value('troupe_dag_runs_currently_running'), 0);
    const head = await checkedFetch(`${server.base}/metrics`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  } finally {
    await server.close();
  }
});

describe('metrics of the event streams', () => {
  let server: TestServer;
  before(async () => { server = await startTestServer('node'); });
  after(() => server.close());

  test('clients following, events sent, the events kept', async () => {
    // Created through the API: its event is committed before the client follows.
    assert.equal((await server.call('POST', '/dags', { name: 'm-ev', spec: 'steps:\n  - name: a\n    command: echo a\n' })).status, 201);
    const before = await scrape(server);
    assert.equal(before.types.get('troupe_event_subscribers'), 'gauge');
    assert.equal(before.types.get('troupe_events_sent_total'), 'counter');
    assert.equal(before.types.get('troupe_event_subscribers_dropped_total'), 'counter');
    assert.equal(before.types.get('troupe_event_log_events'), 'gauge');
    assert.equal(before.value('troupe_event_subscribers'), 0);
    const stream = await SseClient.open(`${server.base}/events?dagName=m-ev`);
    const { dagRunId } = await server.startAndWait('m-ev');
    await stream.until((messages) => messages.some((message) => message.event === 'run.succeeded' && message.data.includes(dagRunId)));
    const during = await scrape(server);
    assert.equal(during.value('troupe_event_subscribers'), 1);
    assert.equal(during.value('troupe_events_sent_total'), 4);
    assert.equal(during.value('troupe_event_log_events'), 5, 'the DAG created, and the run\'s four');
    assert.equal(during.value('troupe_event_subscribers_dropped_total'), 0);
    // One observation per write to the client: its four events went out in one to four writes.
    assert.equal(during.types.get('troupe_event_delivery_seconds'), 'histogram');
    const writes = during.value('troupe_event_delivery_seconds_count');
    assert.ok(writes >= 1 && writes <= 4, `writes: ${writes}`);
    stream.close();
    assert.ok(await waitUntil(async () => (await scrape(server)).value('troupe_event_subscribers') === 0));
  });
});

// A traced run placed on a worker (distributed dispatch through a real redis-server) joins the same
// trace: the worker exports its spans, under the span of the caller that started it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch, startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';
import { startHttpReceiver, type OtlpReceiver } from './support/otlp-receiver.ts';

const missing = redisMissing();
let redis: RedisServer;
let server: TestServer;
let worker: WorkerProcess | undefined;
let receiver: OtlpReceiver;

before(async () => {
  if (missing) throw new Error(missing);
  receiver = await startHttpReceiver();
  redis = await startRedis();
  server = await startTestServer('uws', { redisUrl: redis.url });
  worker = await startWorkerProcess({ id: 'traced-worker', redisUrl: redis.url, labels: 'zone=eu', maxActiveRuns: 2 }, listedOn(() => server));
});

after(async () => {
  await worker?.stop();
  await server?.close();
  await redis?.stop();
  await receiver?.close();
});

test('a traced run on a worker exports its spans from the worker, in the trace of the caller that started it', async () => {
  await server.writeDag('remote-traced', `workerSelector:\n  zone: eu\notel:\n  enabled: true\n  endpoint: ${receiver.endpoint}\n  insecure: true\nsteps:\n  - name: a\n    command: printenv TRACEPARENT\n`);
  const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
  const started = await checkedFetch(`${server.base}/dags/remote-traced/start`, {
    method: 'POST', headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-1122334455667788-01` }, body: '{}',
  });
  assert.equal(started.status, 200);
  const { dagRunId } = await started.json() as { dagRunId: string };
  const run = await server.waitForRun('remote-traced', dagRunId);
  assert.equal(run.statusLabel, 'succeeded');
  assert.equal(run.workerId, 'traced-worker');
  assert.ok(await waitUntil(() => receiver.spans().length >= 2, 10_000), JSON.stringify(receiver.spans()));
  const spans = receiver.spans();
  const root = spans.find((span) => span.name === 'DAG: remote-traced')!;
  const step = spans.find((span) => span.name === 'Step: a')!;
  assert.deepEqual([root.traceId, root.parentSpanId], [traceId, '1122334455667788']);
  assert.deepEqual([step.traceId, step.parentSpanId], [traceId, root.spanId]);
  assert.equal(await server.stepLog('remote-traced', dagRunId, 'a'), `00-${traceId}-${step.spanId}-01`);
});

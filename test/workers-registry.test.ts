// The worker registry on a real Redis: what each worker says of itself every heartbeat, listed in
// Dagu's shape with a health from the heartbeat's age on Redis's clock; a worker that leaves is
// gone; a password in the URL is needed, and never shown.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { heartbeat, leave, listWorkers, workerView } from '../src/workers/registry.ts';
import { checkRedisUrl, healthOf, maskedRedisUrl, parseLabels, selectorMatches } from '../src/core/index.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';

const missing = redisMissing();
// In CI a missing redis-server fails the suite; elsewhere it may be skipped.
const skip = missing !== undefined && !process.env.CI ? missing : false;

let redis: RedisServer;
let client: Redis;
before(async () => {
  if (skip) return;
  redis = await startRedis({ password: 's3cret/pass' });
  client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
});
after(async () => {
  client?.disconnect();
  await redis?.stop();
});

test('workers are listed as they last said, by id, with Dagu\'s fields; one that leaves is gone', { skip }, async () => {
  assert.deepEqual(await listWorkers(client), []);
  const first = await heartbeat(client, { id: 'gpu-1', labels: { gpu: 'true', zone: 'eu' }, maxActiveRuns: 4, runningTasks: [], draining: true, incarnation: 'p2' });
  await heartbeat(client, { id: 'cpu-1', labels: {}, maxActiveRuns: 2, runningTasks: [{ dagRunId: 'r1', dagName: 'etl', startedAt: '2026-11-29T03:00:00.000Z' }] });
  const workers = await listWorkers(client);
  assert.deepEqual(workers.map((worker) => worker.id), ['cpu-1', 'gpu-1']);
  const [cpu, gpu] = workers;
  assert.deepEqual(gpu, {
    id: 'gpu-1', labels: { gpu: 'true', zone: 'eu' }, totalPollers: 4, busyPollers: 0, runningTasks: [], lastHeartbeatAt: new Date(first).toISOString(), healthStatus: 'healthy',
    draining: true, incarnation: 'p2',
  });
  // GET /workers shows Dagu's fields alone.
  assert.deepEqual(Object.keys(workerView(gpu)), ['id', 'labels', 'totalPollers', 'busyPollers', 'runningTasks', 'lastHeartbeatAt', 'healthStatus']);
  assert.equal(cpu.draining, false);
  assert.equal(cpu.busyPollers, 1);
  assert.deepEqual(cpu.runningTasks, [{ dagRunId: 'r1', dagName: 'etl', startedAt: '2026-11-29T03:00:00.000Z' }]);
  // The heartbeat's time is Redis's clock.
  const [seconds, micros] = await client.time();
  assert.ok(Math.abs(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - first) < 5_000);
  await leave(client, 'gpu-1');
  assert.deepEqual((await listWorkers(client)).map((worker) => worker.id), ['cpu-1']);
  await leave(client, 'cpu-1');
});

test('health from the heartbeat\'s age: under 5 s healthy, under 15 s warning, then unhealthy', () => {
  assert.deepEqual([0, 4_999, 5_000, 14_999, 15_000, 3600_000].map(healthOf), ['healthy', 'healthy', 'warning', 'warning', 'unhealthy', 'unhealthy']);
});

test('without the password Redis refuses, and the URL is shown masked', { skip }, async () => {
  const anonymous = new Redis(`redis://127.0.0.1:${redis.port}`, { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  anonymous.on('error', () => {});
  await anonymous.connect().catch(() => undefined);
  await assert.rejects(listWorkers(anonymous), /NOAUTH|WRONGPASS|authentication/i);
  anonymous.disconnect();
  assert.equal(maskedRedisUrl(redis.url), `redis://***@127.0.0.1:${redis.port}`);
  assert.ok(!maskedRedisUrl('rediss://user:pw@cache.example.com:6380/2').includes('pw'));
  assert.equal(maskedRedisUrl('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6379');
  assert.equal(checkRedisUrl('rediss://:pw@cache.example.com:6380/2').protocol, 'rediss:');
  for (const bad of ['http://127.0.0.1:6379', 'not a url', 'redis://']) {
    assert.throws(() => checkRedisUrl(bad), (error: Error) => /Redis URL/.test(error.message) && !error.message.includes('pw'), bad);
  }
});

test('labels: key=value pairs; a selector is met by a worker carrying each of its pairs exactly', () => {
  assert.deepEqual(parseLabels('gpu=true, zone=eu-west ,empty='), { gpu: 'true', zone: 'eu-west', empty: '' });
  assert.deepEqual(parseLabels(''), {});
  for (const bad of ['gpu', '=true', 'gpu=true,gpu=false']) assert.throws(() => parseLabels(bad), /label/, bad);
  const labels = { gpu: 'true', zone: 'eu-west' };
  assert.equal(selectorMatches({}, labels), true);
  assert.equal(selectorMatches({ gpu: 'true' }, labels), true);
  assert.equal(selectorMatches({ gpu: 'true', zone: 'eu-west' }, labels), true);
  assert.equal(selectorMatches({ gpu: 'True' }, labels), false);
  assert.equal(selectorMatches({ GPU: 'true' }, labels), false);
  assert.equal(selectorMatches({ gpu: 'true', arch: 'arm64' }, labels), false);
  assert.equal(selectorMatches({ toString: '' }, {}), false);
});

// Distributed dispatch through a Redis that asks for a password: the real server, a real `troupe
// worker`, a real redis-server with requirepass. Runs go through it, and the password shows
// nowhere: not in GET /workers (its errors included), not in the worker's output.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';

const missing = redisMissing();
const PASSWORD = 'wh1sper-Of-the-4-winds';

describe('a Redis with a password', { skip: missing && !process.env.CI ? missing : false }, () => {
  let redis: RedisServer;
  let server: TestServer;
  let worker: WorkerProcess;

  before(async () => {
    if (missing) throw new Error(missing);
    redis = await startRedis({ password: PASSWORD });
    server = await startTestServer('uws', { redisUrl: redis.url });
    const listed = listedOn(() => server);
    worker = await startWorkerProcess({ id: 'a-one', redisUrl: redis.url, labels: 'secure=yes', maxActiveRuns: 2 }, listed);
  });

  after(async () => {
    await worker?.stop();
    await server?.close();
    await redis?.stop();
  });

  test('runs go through it; the password shows in no answer and no line of the worker', async () => {
    assert.ok(redis.url.includes(PASSWORD));
    await server.writeDag('guarded', 'workerSelector:\n  secure: "yes"\nsteps:\n  - name: s\n    command: echo through a locked door\n');
    const run = await server.startAndWait('guarded');
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(run.workerId, 'a-one');
    assert.equal(await server.stepLog('guarded', run.dagRunId, 's'), 'through a locked door');
    const port = redis.port;
    await redis.stop();
    const workers = await server.call('GET', '/workers');
    assert.equal(workers.status, 200);
    assert.match(workers.body.errors[0], /redis:\/\/\*\*\*@127\.0\.0\.1:\d+/);
    assert.ok(!workers.text.includes(PASSWORD), workers.text);
    redis = await startRedis({ password: PASSWORD, port });
    // The worker's start line names the URL masked; nothing it printed holds the password.
    assert.match(worker.log(), /from redis:\/\/\*\*\*@127\.0\.0\.1:\d+/);
    assert.ok(!worker.log().includes(PASSWORD), worker.log());
  });
});

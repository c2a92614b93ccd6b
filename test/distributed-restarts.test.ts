// Distributed dispatch across restarts: the server stopped and started again while a worker runs
// its run, and Redis stopped and started again mid-run. Real redis-server, server and `troupe
// worker`. Nothing is lost and nothing applied twice: the run ends as it ran, every log line once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';

const missing = redisMissing();

const THREE_STEPS = [
  'workerSelector:', '  pool: r', 'steps:',
  '  - name: one', '    command: echo one',
  '  - name: two', '    command: sh -c "sleep 1.5; echo two"', '    depends: one',
  '  - name: three', '    command: echo three', '    depends: two',
].join('\n');

describe('restarts under distributed dispatch', { skip: missing && !process.env.CI ? missing : false }, () => {
  let redis: RedisServer;
  let server: TestServer;
  let worker: WorkerProcess;
  const listed = listedOn(() => server);

  before(async () => {
    if (missing) throw new Error(missing);
    redis = await startRedis();
    server = await startTestServer('uws', { redisUrl: redis.url });
    worker = await startWorkerProcess({ id: 'r-one', redisUrl: redis.url, labels: 'pool=r', maxActiveRuns: 2 }, listed);
  });

  after(async () => {
    await worker?.stop();
    await server?.close();
    await redis?.stop();
  });

  async function untilStepRuns(dag: string, dagRunId: string, step: number): Promise<void> {
    for (;;) {
      const details = (await server.call('GET', `/dag-runs/${dag}/${dagRunId}`)).body.dagRunDetails;
      if (details.nodes[step].status === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function assertWhole(dag: string, dagRunId: string): Promise<void> {
    const run = await server.waitForRun(dag, dagRunId);
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(run.workerId, 'r-one');
    for (const step of ['one', 'two', 'three']) assert.equal(await server.stepLog(dag, dagRunId, step), step);
    const lines = ((await server.call('GET', `/dag-runs/${dag}/${dagRunId}/log`)).body.content as string).split('\n');
    const messages = lines.map((line) => /msg="([^"]+)"(?: .*step=(\w+))?/.exec(line)?.slice(1).filter(Boolean).join(' '));
    assert.deepEqual(messages, [
      'DAG run started', 'DAG run placed on a worker',
      'Step started one', 'Step finished one', 'Step started two', 'Step finished two', 'Step started three', 'Step finished three',
      'DAG run finished',
    ]);
  }

  test('the server stopped and started again while the worker runs: the run goes on, and what it did meanwhile is applied once, in order', async () => {
    await server.writeDag('across-restart', THREE_STEPS);
    const { dagRunId } = (await server.call('POST', '/dags/across-restart/start', {})).body;
    await untilStepRuns('across-restart', dagRunId, 1);
    const home = server.home;
    await server.troupe.close();
    // The run finishes on the worker while no server hears it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    server = await startTestServer('uws', { home, redisUrl: redis.url });
    await assertWhole('across-restart', dagRunId);
  });

  test('Redis stopped for a while mid-run and started again: no record lost, reads answered meanwhile', async () => {
    await server.writeDag('across-redis', THREE_STEPS);
    const { dagRunId } = (await server.call('POST', '/dags/across-redis/start', {})).body;
    await untilStepRuns('across-redis', dagRunId, 1);
    const port = redis.port;
    await redis.stop();
    // Reads are answered while Redis is away; GET /workers says why it lists none.
    const details = await server.call('GET', `/dag-runs/across-redis/${dagRunId}`);
    assert.equal(details.status, 200);
    const workers = await server.call('GET', '/workers');
    assert.equal(workers.status, 200);
    assert.deepEqual(workers.body.workers, []);
    assert.match(workers.body.errors[0], /Redis at redis:\/\/127\.0\.0\.1:\d+ is not reachable/);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    redis = await startRedis({ port });
    await assertWhole('across-redis', dagRunId);
  });

  test('a worker out of reach for longer than workerLostSec: the server settles its run, and the worker stops it once it hears so', async () => {
    const ownRedis = await startRedis();
    const own = await startTestServer('uws', { redisUrl: ownRedis.url, workerLostMs: 1_500 });
    const ownListed = listedOn(() => own);
    const cutOff = await startWorkerProcess({ id: 'r-cut', redisUrl: ownRedis.url, labels: 'pool=cut', maxActiveRuns: 2 }, ownListed);
    try {
      await own.writeDag('cut-off', 'workerSelector:\n  pool: cut\nsteps:\n  - name: long\n    command: sleep 30\n');
      const { dagRunId } = (await own.call('POST', '/dags/cut-off/start', {})).body;
      for (;;) {
        if ((await own.call('GET', `/dag-runs/cut-off/${dagRunId}`)).body.dagRunDetails.nodes[0].status === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Frozen (a machine that hangs, a network cut): its step goes on, its heartbeats stop.
      cutOff.child.kill('SIGSTOP');
      const run = await own.waitForRun('cut-off', dagRunId);
      assert.equal(run.statusLabel, 'failed');
      cutOff.child.kill('SIGCONT');
      // The worker hears, at its next heartbeat, that the run is no longer its own: it stops it long before its 30 s.
      // (Its heartbeat from before it froze may not list the run yet: it says so once it has stopped it.)
      const deadline = Date.now() + 15_000;
      for (;;) {
        const listed = (await own.call('GET', '/workers')).body.workers.find((one: { id: string }) => one.id === 'r-cut');
        if (/the server settled this run while this worker was out of its reach/.test(cutOff.log()) && listed && listed.busyPollers === 0) break;
        assert.ok(Date.now() < deadline, `the worker still runs the settled run: ${cutOff.log()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await cutOff.stop();
      await own.close();
      await ownRedis.stop();
    }
  });
});

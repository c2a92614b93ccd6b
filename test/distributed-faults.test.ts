// Distributed dispatch when a worker dies: a real redis-server, the real server, real `troupe
// worker` processes, one of them killed with SIGKILL mid-run. After the configured silence its run
// is settled as a crash settles one: resumed on another worker carrying the labels when the
// interrupted step may retry (finished steps kept), else recorded failed naming the worker.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from './helpers.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';

const missing = redisMissing();

describe('a worker killed mid-run', { skip: missing && !process.env.CI ? missing : false }, () => {
  let redis: RedisServer;
  let server: TestServer;
  let scratch: string;
  const workers: WorkerProcess[] = [];
  const listed = listedOn(() => server);

  before(async () => {
    if (missing) throw new Error(missing);
    scratch = await mkdtemp(join(tmpdir(), 'troupe-faults-'));
    redis = await startRedis();
    server = await startTestServer('uws', { redisUrl: redis.url, workerLostMs: 2_000 });
  });

  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await server?.close();
    await redis?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  /** Starts the run, waits until its step `hang` runs on a worker, kills that worker; the worker it ran on. */
  async function killMidRun(dag: string): Promise<{ dagRunId: string; killed: string; firstStartedAt: string; log: string }> {
    const { dagRunId } = (await server.call('POST', `/dags/${dag}/start`, {})).body;
    let details;
    for (;;) {
      details = (await server.call('GET', `/dag-runs/${dag}/${dagRunId}`)).body.dagRunDetails;
      if (details.nodes[1].status === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const killed = details.workerId as string;
    await workers.find((worker) => worker.id === killed)!.kill();
    workers.splice(workers.findIndex((worker) => worker.id === killed), 1);
    return { dagRunId, killed, firstStartedAt: details.nodes[0].startedAt, log: details.log };
  }

  test('a step with a retry left resumes on another worker, its finished steps kept', async () => {
    for (const id of ['f-one', 'f-two']) workers.push(await startWorkerProcess({ id, redisUrl: redis.url, labels: 'pool=f', maxActiveRuns: 2 }, listed));
    const marker = join(scratch, 'hung-once');
    await server.writeDag('resumes', [
      'workerSelector:', '  pool: f', 'steps:',
      '  - name: first', '    command: echo done before',
      '  - name: hang', `    command: sh -c 'if [ -f ${marker} ]; then echo second try; else touch ${marker}; sleep 5; fi'`,
      '    depends: first', '    retryPolicy:', '      limit: 1', '      intervalSec: 0',
    ].join('\n'));
    const { dagRunId, killed, firstStartedAt, log: firstLog } = await killMidRun('resumes');
    const run = await server.waitForRun('resumes', dagRunId, (candidate) => candidate.status === 4 || candidate.status === 2);
    const details = (await server.call('GET', `/dag-runs/resumes/${dagRunId}`)).body.dagRunDetails;
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(details));
    assert.notEqual(details.workerId, killed);
    assert.ok(['f-one', 'f-two'].includes(details.workerId));
    assert.equal(details.nodes[0].startedAt, firstStartedAt, 'the finished step ran once');
    assert.equal(details.nodes[1].retryCount, 1);
    assert.equal(await server.stepLog('resumes', dagRunId, 'hang'), 'second try');
    // The interrupted attempt's log says why it went on as a new attempt.
    const interrupted = await readFile(firstLog, 'utf8');
    assert.match(interrupted, new RegExp(`msg="DAG run interrupted" .*reason="worker ${killed} went away: no heartbeat for 2 s"`));
    assert.match(interrupted, /msg="DAG run resumed as a new attempt" .*steps=hang/);
    assert.notEqual(details.log, firstLog);
  });

  test('without a retry left the run is recorded failed, the reason naming the worker', async () => {
    workers.push(await startWorkerProcess({ id: 'f-three', redisUrl: redis.url, labels: 'pool=f', maxActiveRuns: 2 }, listed));
    await server.writeDag('fails', [
      'workerSelector:', '  pool: f', 'steps:',
      '  - name: first', '    command: echo done before',
      '  - name: hang', '    command: sleep 5', '    depends: first',
    ].join('\n'));
    const { dagRunId, killed } = await killMidRun('fails');
    const run = await server.waitForRun('fails', dagRunId);
    assert.equal(run.statusLabel, 'failed');
    const details = (await server.call('GET', `/dag-runs/fails/${dagRunId}`)).body.dagRunDetails;
    assert.equal(details.nodes[0].statusLabel, 'succeeded');
    assert.equal(details.nodes[1].statusLabel, 'failed');
    assert.equal(details.nodes[1].error, `worker ${killed} went away: no heartbeat for 2 s`);
    const log = (await server.call('GET', `/dag-runs/fails/${dagRunId}/log`)).body.content as string;
    assert.match(log, new RegExp(`msg="DAG run interrupted" .*reason="worker ${killed} went away: no heartbeat for 2 s"`));
  });

  test('a worker started again under the same id: the runs of its earlier process are settled at once, not after the silence', async () => {
    // A server of its own, whose silence is long: only the new process can tell it the runs are gone.
    const ownRedis = await startRedis();
    const own = await startTestServer('uws', { redisUrl: ownRedis.url, workerLostMs: 60_000 });
    const ownListed = listedOn(() => own);
    let again: WorkerProcess | undefined;
    try {
      const before = await startWorkerProcess({ id: 'f-again', redisUrl: ownRedis.url, labels: 'pool=again', maxActiveRuns: 2 }, ownListed);
      await own.writeDag('restarted', 'workerSelector:\n  pool: again\nsteps:\n  - name: first\n    command: echo before\n  - name: hang\n    command: sleep 5\n    depends: first\n');
      const { dagRunId } = (await own.call('POST', '/dags/restarted/start', {})).body;
      for (;;) {
        if ((await own.call('GET', `/dag-runs/restarted/${dagRunId}`)).body.dagRunDetails.nodes[1].status === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await before.kill();
      again = await startWorkerProcess({ id: 'f-again', redisUrl: ownRedis.url, labels: 'pool=again', maxActiveRuns: 2 }, async () => true);
      const run = await own.waitForRun('restarted', dagRunId);
      assert.equal(run.statusLabel, 'failed');
      const details = (await own.call('GET', `/dag-runs/restarted/${dagRunId}`)).body.dagRunDetails;
      assert.equal(details.nodes[1].error, 'worker f-again started again: the runs of its previous process went with it');
    } finally {
      await again?.stop();
      await own.close();
      await ownRedis.stop();
    }
  });

  test('a draining worker takes no new run: the next goes to another, and its own run finishes in its grace', async () => {
    const draining = await startWorkerProcess({ id: 'd-a', redisUrl: redis.url, labels: 'pool=d', maxActiveRuns: 2, extraArgs: ['--shutdown-grace', '20'] }, listed);
    workers.push(await startWorkerProcess({ id: 'd-b', redisUrl: redis.url, labels: 'pool=d', maxActiveRuns: 2 }, listed));
    await server.writeDag('in-grace', 'maxActiveRuns: 4\nworkerSelector:\n  pool: d\nsteps:\n  - name: s\n    command: sleep 1.5\n');
    const first = (await server.call('POST', '/dags/in-grace/start', {})).body.dagRunId;
    const running = await server.waitForRun('in-grace', first, (run) => run.status === 1);
    assert.equal(running.workerId, 'd-a');
    const stopped = draining.stop();
    // Its heartbeat says it drains; the server reads it within its next look at the list.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const second = (await server.call('POST', '/dags/in-grace/start', {})).body.dagRunId;
    assert.equal((await server.waitForRun('in-grace', second)).workerId, 'd-b');
    const finished = await server.waitForRun('in-grace', first);
    assert.equal(finished.statusLabel, 'succeeded');
    assert.equal(await stopped, 0);
  });

  test('a run handed to a worker just before its drain is still run there, not left in its queue to be lost', async () => {
    const late = await startWorkerProcess({ id: 'd-late', redisUrl: redis.url, labels: 'pool=late', maxActiveRuns: 2, extraArgs: ['--shutdown-grace', '20'] }, listed);
    await server.writeDag('handed-late', 'workerSelector:\n  pool: late\nsteps:\n  - name: s\n    command: sleep 0.3\n');
    // Frozen, it cannot take the job the server hands it; it hears its SIGTERM as it wakes, with the job waiting.
    late.child.kill('SIGSTOP');
    let dagRunId: string;
    let stopped: Promise<number | null>;
    try {
      dagRunId = (await server.call('POST', '/dags/handed-late/start', {})).body.dagRunId;
      assert.equal((await server.waitForRun('handed-late', dagRunId, (run) => run.status === 1)).workerId, 'd-late');
      await new Promise((resolve) => setTimeout(resolve, 300));
      stopped = late.stop();
    } finally {
      late.child.kill('SIGCONT');
    }
    const run = await server.waitForRun('handed-late', dagRunId);
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
    assert.equal(run.workerId, 'd-late');
    assert.equal(await stopped, 0);
  });
});

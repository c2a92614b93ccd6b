// Distributed dispatch end to end: a real redis-server, the real server with `distributed.redis`,
// and real `troupe worker` processes. Runs with a workerSelector go to a worker carrying every
// label (exactly, case-sensitive), wait queued for one that appears later, never exceed a worker's
// limit, and come back whole: records, run log, step logs, outputs, the worker's id; a stop reaches
// the worker.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { SseClient } from './support/sse-client.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';

const missing = redisMissing();

describe('runs on workers through Redis', { skip: missing && !process.env.CI ? missing : false }, () => {
  let redis: RedisServer;
  let server: TestServer;
  const workers: WorkerProcess[] = [];
  const listed = listedOn(() => server);
  const startWorker = async (id: string, labels: string, maxActiveRuns = 4, extraArgs: string[] = []) => {
    // Each worker's HOME is its own: its steps see the worker's system variables, not the server's.
    const worker = await startWorkerProcess({ id, redisUrl: redis.url, labels, maxActiveRuns, extraArgs, env: { HOME: `/home/${id}` } }, listed);
    workers.push(worker);
    return worker;
  };

  before(async () => {
    if (missing) throw new Error(missing);
    redis = await startRedis();
    server = await startTestServer('uws', { redisUrl: redis.url });
  });

  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await server?.close();
    await redis?.stop();
  });

  test('a run goes to the worker carrying every label; its records, logs and outputs come back', async () => {
    await startWorker('gpu-eu', 'gpu=true,zone=eu');
    await startWorker('cpu-us', 'zone=us');
    await server.writeDag('on-gpu', [
      'workerSelector:', '  gpu: "true"', 'params:', '  - WHO: world', 'steps:',
      '  - name: hello', '    command: echo hello ${WHO}', '    output: GREETING',
      '  - name: both', '    script: |', '      echo "got ${GREETING}"', '      echo to-stderr >&2', '    depends: hello',
    ].join('\n'));
    await server.writeDag('on-us', 'workerSelector:\n  zone: us\nsteps:\n  - name: s\n    command: echo in the us\n  - name: home\n    command: echo $HOME\n');
    await server.writeDag('here', 'steps:\n  - name: s\n    command: echo on the server\n');

    const gpu = await server.startAndWait('on-gpu', { params: 'WHO=remote' });
    assert.equal(gpu.statusLabel, 'succeeded');
    assert.equal(gpu.workerId, 'gpu-eu');
    const details = (await server.call('GET', `/dag-runs/on-gpu/${gpu.dagRunId}`)).body.dagRunDetails;
    assert.equal(details.workerId, 'gpu-eu');
    assert.deepEqual(details.nodes.map((node: { statusLabel: string }) => node.statusLabel), ['succeeded', 'succeeded']);
    assert.ok(details.nodes[0].stdout.startsWith(server.home), `the server's own path: ${details.nodes[0].stdout}`);
    assert.equal(await server.stepLog('on-gpu', gpu.dagRunId, 'hello'), 'hello remote');
    assert.equal(await server.stepLog('on-gpu', gpu.dagRunId, 'both'), 'got hello remote');
    const stderr = await server.call('GET', `/dag-runs/on-gpu/${gpu.dagRunId}/steps/both/log?stream=stderr`);
    assert.equal(stderr.body.content, 'to-stderr');
    const outputs = await server.call('GET', `/dag-runs/on-gpu/${gpu.dagRunId}/outputs`);
    assert.equal(outputs.status, 200);
    assert.deepEqual(outputs.body.outputs, { greeting: 'hello remote' });
    const lines: string[] = (await server.call('GET', `/dag-runs/on-gpu/${gpu.dagRunId}/log`)).body.content.split('\n');
    assert.match(lines[0], /msg="DAG run started"/);
    assert.match(lines[1], /msg="DAG run placed on a worker" dag=on-gpu .*worker=gpu-eu$/);
    assert.match(lines.at(-1)!, /msg="DAG run finished" .*status=succeeded/);
    assert.ok(!lines.some((line) => line.includes('workerSelector ignored')));

    const us = await server.startAndWait('on-us');
    assert.equal(us.workerId, 'cpu-us');
    assert.equal(await server.stepLog('on-us', us.dagRunId, 's'), 'in the us');
    assert.equal(await server.stepLog('on-us', us.dagRunId, 'home'), '/home/cpu-us');
    // No selector: this server runs it.
    const here = await server.startAndWait('here');
    assert.equal(here.statusLabel, 'succeeded');
    assert.equal(here.workerId, undefined);
  });

  test('a remote step\'s log is followed live: its lines come while it runs on the worker', async () => {
    const go = join(server.home, 'GO-remote');
    await server.writeDag('remote-talker', [
      'workerSelector:', '  gpu: "true"', 'steps:', '  - name: talk', '    script: |', '      echo line1; echo line2; echo line3',
      `      i=0; while [ ! -f '${go}' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 7; sleep 0.05; done`, '      echo line4; printf line5',
    ].join('\n'));
    const { dagRunId } = (await server.call('POST', '/dags/remote-talker/start', {})).body;
    const stream = await SseClient.open(`${server.base}/dag-runs/remote-talker/${dagRunId}/steps/talk/log/stream`);
    try {
      assert.equal(stream.status, 200);
      // The step waits for GO after its third line: these came from the worker while it ran.
      const isLine = (message: { event: string; id?: string }) => message.event === 'message' && message.id !== undefined;
      await stream.until((messages) => messages.filter(isLine).length >= 3);
      assert.equal((await server.call('GET', `/dag-runs/remote-talker/${dagRunId}`)).body.dagRun.status, 1);
      await writeFile(go, '');
      const messages = await stream.until((all) => all.some((message) => message.event === 'end'));
      assert.deepEqual(messages.filter(isLine).map((message) => message.data), ['line1', 'line2', 'line3', 'line4', 'line5']);
    } finally {
      stream.close();
    }
    assert.equal((await server.waitForRun('remote-talker', dagRunId)).workerId, 'gpu-eu');
  });

  test('a run waits queued for a worker with its labels (exact, case-sensitive) and starts when one appears', async () => {
    await server.writeDag('needs-arm', 'workerSelector:\n  arch: ARM64\nsteps:\n  - name: s\n    command: echo on arm\n');
    const started = await server.call('POST', '/dags/needs-arm/start', {});
    assert.equal(started.status, 200);
    const { dagRunId } = started.body;
    const queued = await server.waitForRun('needs-arm', dagRunId, (run) => run.status === 5);
    assert.equal(queued.statusLabel, 'queued');
    const queues = (await server.call('GET', '/queues')).body.queues as Array<{ name: string; queuedDAGRuns: Array<Record<string, unknown>> }>;
    const waiting = queues.find((queue) => queue.name === 'needs-arm')!.queuedDAGRuns[0];
    assert.equal(waiting.dagRunId, dagRunId);
    assert.equal(waiting.waitingFor, 'worker');
    assert.deepEqual(waiting.workerSelector, { arch: 'ARM64' });
    // A worker whose label differs in case takes nothing.
    await startWorker('arm-lower', 'arch=arm64');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await server.call('GET', `/dag-runs/needs-arm/${dagRunId}`)).body.dagRun.status, 5);
    await startWorker('arm-upper', 'arch=ARM64,extra=yes');
    const run = await server.waitForRun('needs-arm', dagRunId);
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(run.workerId, 'arm-upper');
  });

  test('a worker never runs more than its limit; the rest wait and go as it frees', async () => {
    await startWorker('single', 'pool=single', 1);
    await server.writeDag('one-at-a-time', 'maxActiveRuns: 3\nworkerSelector:\n  pool: single\nsteps:\n  - name: s\n    command: sleep 0.3\n');
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) ids.push((await server.call('POST', '/dags/one-at-a-time/start', {})).body.dagRunId);
    let most = 0;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const runs = await Promise.all(ids.map(async (id) => (await server.call('GET', `/dag-runs/one-at-a-time/${id}`)).body.dagRun));
      most = Math.max(most, runs.filter((run) => run.status === 1).length);
      if (runs.every((run) => run.status === 4)) break;
      assert.ok(Date.now() < deadline, 'the three runs did not all succeed');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(most, 1);
    const finished = await Promise.all(ids.map(async (id) => (await server.call('GET', `/dag-runs/one-at-a-time/${id}`)).body.dagRun));
    const spans = finished.map((run) => [Date.parse(run.startedAt), Date.parse(run.finishedAt)]).sort((one, other) => one[0] - other[0]);
    for (let index = 1; index < spans.length; index++) assert.ok(spans[index][0] >= spans[index - 1][1], 'two runs overlapped on a worker of one slot');
  });

  test('sub DAG runs run on the worker with their caller: a local DAG of the file, and a DAG file it calls', async () => {
    await server.writeDag('leaf-file', 'params:\n  - WHAT: nothing\nsteps:\n  - name: say\n    command: echo leaf got ${WHAT}\n    output: LEAF\n');
    await server.writeDag('remote-parent', [
      'workerSelector:', '  gpu: "true"', 'steps:',
      '  - name: local-call', '    call: inner', '    params: "WHO=local"',
      '  - name: file-call', '    call: leaf-file', '    params: "WHAT=file"', '    depends: local-call',
      '---', 'name: inner', 'params:', '  - WHO: nobody', 'steps:', '  - name: greet', '    command: echo inner says ${WHO}',
    ].join('\n'));
    const parent = await server.startAndWait('remote-parent');
    assert.equal(parent.statusLabel, 'succeeded');
    assert.equal(parent.workerId, 'gpu-eu');
    const subRuns = (await server.call('GET', `/dag-runs/remote-parent/${parent.dagRunId}/sub-dag-runs`)).body.subRuns as Array<{ dagRunId: string }>;
    assert.equal(subRuns.length, 2);
    const children = await Promise.all(subRuns.map(async ({ dagRunId }) => (await server.call('GET', `/dag-runs/remote-parent/${parent.dagRunId}/sub-dag-runs/${dagRunId}`)).body.dagRunDetails));
    const byName = new Map(children.map((child) => [child.name, child]));
    assert.deepEqual([...byName.keys()].sort(), ['inner', 'leaf-file']);
    for (const child of children) {
      assert.equal(child.statusLabel, 'succeeded');
      assert.equal(child.workerId, 'gpu-eu');
      assert.equal(child.rootDAGRunId, parent.dagRunId);
    }
    const innerLog = await server.call('GET', `/dag-runs/remote-parent/${parent.dagRunId}/sub-dag-runs/${byName.get('inner').dagRunId}/steps/greet/log`);
    assert.equal(innerLog.body.content, 'inner says local');
    const leafLog = await server.call('GET', `/dag-runs/remote-parent/${parent.dagRunId}/sub-dag-runs/${byName.get('leaf-file').dagRunId}/steps/say/log`);
    assert.equal(leafLog.body.content, 'leaf got file');
    const childRunLog = await server.call('GET', `/dag-runs/remote-parent/${parent.dagRunId}/sub-dag-runs/${byName.get('leaf-file').dagRunId}/log`);
    assert.match(childRunLog.body.content, /msg="DAG run finished" dag=leaf-file .*status=succeeded/);
  });

  test('a call whose target names a variable takes the DAG file its params name; one named by an output is not found on the worker', async () => {
    await server.writeDag('picked-child', 'steps:\n  - name: hello\n    command: echo picked child ran\n');
    await server.writeDag('output-child', 'steps:\n  - name: hello\n    command: echo output child ran\n');
    await server.writeDag('by-param', [
      'workerSelector:', '  gpu: "true"', 'params:', '  - CHILD: picked-child', 'steps:',
      '  - name: by-param', '    call: ${CHILD}',
      '  - name: by-output', '    command: echo output-child', '    output: NAMED', '    depends: by-param',
      '  - name: by-named', '    call: ${NAMED}', '    depends: by-output',
    ].join('\n'));
    const run = await server.startAndWait('by-param');
    const nodes = (await server.call('GET', `/dag-runs/by-param/${run.dagRunId}`)).body.dagRun.nodes as Array<{ step: { name: string }; statusLabel: string; error: string }>;
    const node = (name: string) => nodes.find((candidate) => candidate.step.name === name)!;
    assert.equal(node('by-param').statusLabel, 'succeeded');
    const subRuns = (await server.call('GET', `/dag-runs/by-param/${run.dagRunId}/sub-dag-runs`)).body.subRuns as Array<{ dagRunId: string }>;
    const child = (await server.call('GET', `/dag-runs/by-param/${run.dagRunId}/sub-dag-runs/${subRuns[0].dagRunId}`)).body.dagRunDetails;
    assert.equal(child.name, 'picked-child');
    assert.equal(child.workerId, 'gpu-eu');
    // A target known only as the run goes: the worker has no copy of it (docs/workers.md says so).
    assert.equal(node('by-named').statusLabel, 'failed');
    assert.match(node('by-named').error, /output-child/);
  });

  test('a call step\'s own workerSelector places its sub DAG run on a worker carrying it; a run on a worker without them fails the step', async () => {
    await server.writeDag('local-caller', [
      'steps:', '  - name: to-gpu', '    call: gpu-child', '    workerSelector:', '      gpu: "true"', '  - name: after', '    command: echo ${TO_GPU}', '    depends: to-gpu',
      '---', 'name: gpu-child', 'steps:', '  - name: work', '    command: echo child on the gpu',
    ].join('\n'));
    const parent = await server.startAndWait('local-caller');
    assert.equal(parent.statusLabel, 'succeeded');
    assert.equal(parent.workerId, undefined);
    const [sub] = (await server.call('GET', `/dag-runs/local-caller/${parent.dagRunId}/sub-dag-runs`)).body.subRuns;
    const child = (await server.call('GET', `/dag-runs/local-caller/${parent.dagRunId}/sub-dag-runs/${sub.dagRunId}`)).body.dagRunDetails;
    assert.equal(child.statusLabel, 'succeeded');
    assert.equal(child.workerId, 'gpu-eu');
    assert.equal((await server.call('GET', `/dag-runs/local-caller/${parent.dagRunId}/sub-dag-runs/${sub.dagRunId}/steps/work/log`)).body.content, 'child on the gpu');

    await server.writeDag('us-caller', [
      'workerSelector:', '  zone: us', 'steps:', '  - name: to-gpu', '    call: gpu-child', '    workerSelector:', '      gpu: "true"',
      '---', 'name: gpu-child', 'steps:', '  - name: work', '    command: echo never',
    ].join('\n'));
    const refused = await server.startAndWait('us-caller');
    assert.equal(refused.statusLabel, 'failed');
    assert.equal(refused.workerId, 'cpu-us');
    const node = (await server.call('GET', `/dag-runs/us-caller/${refused.dagRunId}`)).body.dagRunDetails.nodes[0];
    assert.match(node.error, /the sub DAG run needs a worker carrying gpu=true/);
  });

  test('a workerSelector on a step that calls nothing is refused at validation', async () => {
    const checked = await server.call('POST', '/dags/validate', { spec: 'steps:\n  - name: s\n    command: echo x\n    workerSelector:\n      gpu: "true"\n' });
    assert.equal(checked.status, 200);
    assert.equal(checked.body.valid, false);
    assert.match(checked.body.errors.join('\n'), /workerSelector.*places a sub DAG run on a worker: it needs call/);
  });

  test('a stop reaches the worker: the run ends aborted', async () => {
    await server.writeDag('long', 'workerSelector:\n  gpu: "true"\nsteps:\n  - name: s\n    command: sleep 30\n');
    const { dagRunId } = (await server.call('POST', '/dags/long/start', {})).body;
    await server.waitForRun('long', dagRunId, (run) => run.status === 1 && run.workerId === 'gpu-eu');
    const details = await server.waitForRun('long', dagRunId, (run) => run.status === 1);
    assert.equal(details.workerId, 'gpu-eu');
    // The step's process has started once its node runs.
    for (;;) {
      const nodes = (await server.call('GET', `/dag-runs/long/${dagRunId}`)).body.dagRunDetails.nodes;
      if (nodes[0].status === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const stopped = await server.call('POST', `/dag-runs/long/${dagRunId}/stop`);
    assert.equal(stopped.status, 200);
    const run = await server.waitForRun('long', dagRunId);
    assert.equal(run.statusLabel, 'aborted');
  });

  test('GET /workers lists each worker in Dagu\'s shape, its runs included; a drained worker leaves the list', async () => {
    const body = (await server.call('GET', '/workers')).body;
    assert.deepEqual(body.errors, []);
    const gpu = body.workers.find((worker: { id: string }) => worker.id === 'gpu-eu');
    assert.deepEqual(gpu.labels, { gpu: 'true', zone: 'eu' });
    assert.equal(gpu.totalPollers, 4);
    assert.equal(gpu.healthStatus, 'healthy');
    assert.ok(Array.isArray(gpu.runningTasks));
    const leaving = workers.find((worker) => worker.id === 'arm-lower')!;
    assert.equal(await leaving.stop(), 0);
    workers.splice(workers.indexOf(leaving), 1);
    assert.equal(await listed('arm-lower'), false);
  });

  test('a worker keeps the step logs of its newest finished runs only (--keep-runs); the server keeps them all', async () => {
    const keeper = await startWorker('keeper', 'pool=keep', 1, ['--keep-runs', '1']);
    await server.writeDag('kept', 'workerSelector:\n  pool: keep\nsteps:\n  - name: s\n    command: echo run ${RUN}\n');
    const ids: string[] = [];
    for (const run of ['one', 'two', 'three']) {
      const done = await server.startAndWait('kept', { params: `RUN=${run}` });
      assert.deepEqual([done.statusLabel, done.workerId], ['succeeded', 'keeper']);
      ids.push(done.dagRunId);
    }
    const folder = join(keeper.home, 'logs', 'kept');
    const runsIn = async () => new Set((await readdir(folder)).map((file) => ids.find((id) => file.startsWith(`${id}.`)) ?? file));
    // Removal follows each end as it is sent: the folder settles on the newest run's files.
    const settled = await waitUntil(async () => (await runsIn()).size === 1, 10_000);
    assert.ok(settled, `only the newest run's files stay: ${[...(await runsIn())].join(', ')}`);
    assert.deepEqual([...(await runsIn())], [ids[2]]);
    assert.ok((await readdir(folder)).some((file) => file.endsWith('.out')), 'the newest run keeps its stdout log');
    for (const [index, run] of ['one', 'two', 'three'].entries()) assert.equal(await server.stepLog('kept', ids[index], 's'), `run ${run}`);
  });

  test('a DAG whose logDir is outside the server\'s logs folder: the worker writes under its own home, the server at the DAG\'s logDir', async () => {
    const logDir = join(server.home, 'own-logs');
    await server.writeDag('own-log-dir', `logDir: ${logDir}\nworkerSelector:\n  gpu: "true"\nsteps:\n  - name: s\n    command: echo to my own folder\n`);
    const run = await server.startAndWait('own-log-dir');
    assert.deepEqual([run.statusLabel, run.workerId], ['succeeded', 'gpu-eu']);
    assert.ok(run.log.startsWith(join(logDir, 'own-log-dir') + '/'), run.log);
    assert.ok(run.nodes[0].stdout.startsWith(join(logDir, 'own-log-dir') + '/'), run.nodes[0].stdout);
    assert.equal(await readFile(run.nodes[0].stdout, 'utf8'), 'to my own folder\n');
    assert.match((await server.call('GET', `/dag-runs/own-log-dir/${run.dagRunId}/log`)).body.content, /msg="DAG run finished"/);
    const worker = workers.find((one) => one.id === 'gpu-eu')!;
    const ownFolder = join(worker.home, 'logs', '.log-dirs', 'own-log-dir');
    const written = await readdir(ownFolder);
    assert.ok(written.some((file) => file.startsWith(`${run.dagRunId}.`) && file.endsWith('.out')), `the worker's copy is under its home: ${written.join(', ')}`);
  });

  test('a retried caller on a worker that kept nothing: its sub DAG run goes on from its earlier attempt, as on the server', async () => {
    await startWorker('forgetful', 'pool=forget', 2, ['--keep-runs', '0']);
    const marks = await mkdtemp(join(tmpdir(), 'troupe-subretry-'));
    try {
      // The child's first step counts its executions; its second fails until the flag is there.
      await server.writeDag('retry-parent', [
        'workerSelector:', '  pool: forget', 'steps:', '  - name: c', '    call: retry-child', '---',
        'name: retry-child', 'steps:',
        `  - name: count`, `    command: sh -c "echo x >> ${join(marks, 'count')}"`,
        `  - name: gate`, `    command: test -f ${join(marks, 'flag')}`, '    depends: count',
      ].join('\n'));
      const first = await server.startAndWait('retry-parent');
      assert.deepEqual([first.statusLabel, first.workerId], ['failed', 'forgetful']);
      await writeFile(join(marks, 'flag'), '');
      assert.equal((await server.call('POST', `/dag-runs/retry-parent/${first.dagRunId}/retry`, {})).status, 200);
      const retried = await server.waitForRun('retry-parent', first.dagRunId, (run) => run.log !== first.log && ![0, 1, 5].includes(run.status));
      assert.equal(retried.statusLabel, 'succeeded');
      assert.equal(await readFile(join(marks, 'count'), 'utf8'), 'x\n', 'the child\'s step that succeeded ran once');
      const children = (await server.call('GET', `/dag-runs/retry-parent/${first.dagRunId}/sub-dag-runs`)).body.subRuns as Array<{ dagRunId: string }>;
      assert.equal(children.length, 1);
      const child = (await server.call('GET', `/dag-runs/retry-parent/${first.dagRunId}/sub-dag-runs/${children[0].dagRunId}`)).body.dagRunDetails;
      assert.deepEqual(child.nodes.map((node: { statusLabel: string }) => node.statusLabel), ['succeeded', 'succeeded']);
      // Its steps printed nothing: its run log is on the server all the same.
      const childLog = await server.call('GET', `/dag-runs/retry-parent/${first.dagRunId}/sub-dag-runs/${children[0].dagRunId}/log`);
      assert.match(childLog.body.content, /msg="DAG run finished" dag=retry-child .*status=succeeded/);
    } finally {
      await rm(marks, { recursive: true, force: true });
    }
  });
});

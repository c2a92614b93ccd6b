// The container executor (definition format: container executor) and the DAG-level container on a real Docker
// engine started for this file (test/support/docker-engine.ts), through the real server over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { BUSYBOX, dockerMissing, startDockerEngine, type DockerEngine } from './support/docker-engine.ts';

const MANAGED = 'org.troupe.managed';
/** Label of the containers this file makes itself (the ones steps exec into). */
const OURS = 'org.troupe.test';
/** The readiness limit while this file runs (the server's worker threads read it at their start). */
const READY_LIMIT_MS = 3_000;

const missing = dockerMissing();
// In CI a missing engine fails the file; elsewhere it is skipped, saying why.
const skip = missing !== undefined && !process.env.CI ? missing : false;

describe('the container executor', { skip }, () => {
  let engine: DockerEngine;
  let server: TestServer;
  let work: string;
  before(async () => {
    engine = await startDockerEngine();
    process.env.DOCKER_HOST = engine.host;
    process.env.TROUPE_CONTAINER_READY_TIMEOUT_MS = String(READY_LIMIT_MS);
    await engine.importBusybox('troupe-test/hello:1', ['CMD ["echo", "hello from the image"]']);
    await engine.importBusybox('troupe-test/healthy:1', ['CMD ["sh"]', 'HEALTHCHECK --interval=1s CMD true']);
    await engine.importBusybox('troupe-test/service:1', ['CMD ["sh", "-c", "echo service up; while :; do sleep 1; done"]']);
    server = await startTestServer();
    work = await mkdtemp(join(tmpdir(), 'troupe-container-'));
  });
  after(async () => {
    await server?.close();
    await engine?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const managed = async () => engine.docker.listContainers({ all: true, filters: { label: [MANAGED] } });
  const run = async (name: string, spec: string, body: object = {}) => {
    const created = await server.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
    return server.startAndWait(name, body);
  };
  const log = async (name: string, dagRunId: string, step: string, stream: 'stdout' | 'stderr' = 'stdout') =>
    (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=${stream}`)).body.content as string;
  const runLog = async (name: string, dagRunId: string) => (await server.call('GET', `/dag-runs/${name}/${dagRunId}/log`)).body.content as string;
  const docker = (config: string[]) => ['    executor:', '      type: docker', '      config:', ...config.map((line) => `        ${line}`)];

  test('a step runs in a new container made from the image, and its output is captured', async () => {
    const result = await run('ct_hello', [
      'steps:',
      '  - name: s',
      ...docker([`image: ${BUSYBOX}`]),
      '    command: echo "in $(hostname)"',
      '    output: WHERE',
    ].join('\n'));
    assert.equal(result.status, 4, JSON.stringify(result));
    assert.match(await log('ct_hello', result.dagRunId, 's'), /^in [0-9a-f]{12}\n?$/, 'the hostname of a container is its short id');
    assert.deepEqual(await managed(), [], 'the container is removed after the step');
  });
  test('the exit code and stderr of the container are the step\'s', async () => {
    const result = await run('ct_fail', [
      'steps:',
      '  - name: s',
      ...docker([`image: ${BUSYBOX}`]),
      '    command: echo to-out; echo to-err >&2; exit 7',
    ].join('\n'));
    assert.equal(result.status, 2);
    const node = result.nodes[0];
    assert.equal(node.status, 2);
    assert.match(node.error, /exit status 7/);
    assert.match(await log('ct_fail', result.dagRunId, 's'), /to-out/);
    const stderr = await log('ct_fail', result.dagRunId, 's', 'stderr');
    assert.match(stderr, /to-err/);
    assert.doesNotMatch(stderr, /to-out/, 'the streams are demultiplexed');
    assert.deepEqual(await managed(), []);
  });

  test('container env and workingDir, host binds, and the run\'s variables reach the container', async () => {
    const shared = join(work, 'binds');
    const result = await run('ct_env', [
      'env:',
      '  - FROM_DAG: dag-value',
      'steps:',
      '  - name: s',
      ...docker([
        `image: ${BUSYBOX}`,
        'container:',
        '  env: [GREETING=hi from config]',
        '  workingDir: /data',
        'host:',
        `  binds: ["${shared}:/data"]`,
      ]),
      '    command: mkdir -p /data && echo "$GREETING" > note.txt; pwd; echo "$FROM_DAG"; echo "home=$HOME"',
    ].join('\n'));
    assert.equal(result.status, 4, JSON.stringify(result.nodes[0]));
    const text = await log('ct_env', result.dagRunId, 's');
    assert.match(text, /^\/data$/m);
    assert.match(text, /^dag-value$/m);
    assert.match(text, /^home=\/root$/m, 'HOME is the image\'s, not the server\'s');
    assert.equal(readFileSync(join(shared, 'note.txt'), 'utf8'), 'hi from config\n');
  });

  test('without a command the image\'s own command runs; platform names the image\'s', async () => {
    const platform = `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`;
    const result = await run('ct_default', ['steps:', '  - name: s', ...docker(['image: troupe-test/hello:1', `platform: ${platform}`])].join('\n'));
    assert.equal(result.status, 4, JSON.stringify(result.nodes[0]));
    assert.match(await log('ct_default', result.dagRunId, 's'), /hello from the image/);
    const other = await run('ct_platform', ['steps:', '  - name: s', ...docker(['image: troupe-test/hello:1', 'platform: linux/s390x', 'pull: never'])].join('\n'));
    assert.equal(other.nodes[0].status, 2, 'the platform reaches the engine, which has no such image');
    assert.match(other.nodes[0].error, /platform|s390x/);
  });

  test('containerName alone runs by exec in that running container, with the exec settings', async () => {
    const target = await engine.docker.createContainer({
      name: 'ct-existing', Image: BUSYBOX, Cmd: ['sh', '-c', 'echo marked > /marker; while :; do sleep 1; done'],
      Labels: { [OURS]: 'true' }, HostConfig: { Init: true },
    });
    await target.start();
    try {
      await waitUntil(async () => (await engine.docker.getContainer('ct-existing').inspect()).State.Running);
      const result = await run('ct_exec', [
        'steps:',
        '  - name: s',
        ...docker(['containerName: ct-existing', 'exec:', '  workingDir: /tmp', '  env: [EXTRA=from-exec]', '  user: nobody']),
        '    command: sleep 0.2; cat /marker; pwd; echo "$EXTRA"; id -u',
      ].join('\n'));
      assert.equal(result.status, 4, JSON.stringify(result.nodes[0]));
      assert.equal(await log('ct_exec', result.dagRunId, 's'), 'marked\n/tmp\nfrom-exec\n65534');
      assert.equal((await target.inspect()).State.Running, true, 'the container is not ours: it keeps running');
      assert.deepEqual(await managed(), [], 'no container was made');
    } finally {
      await target.remove({ force: true });
    }
  });

  test('a stopped step run by exec ends its command and the command\'s children, and leaves the container running', async () => {
    const target = await engine.docker.createContainer({
      name: 'ct-execstop', Image: BUSYBOX, Cmd: ['sh', '-c', 'while :; do sleep 1; done'], Labels: { [OURS]: 'true' }, HostConfig: { Init: true },
    });
    await target.start();
    try {
      const created = await server.call('POST', '/dags', {
        name: 'ct_execstop',
        spec: ['steps:', '  - name: s', ...docker(['containerName: ct-execstop']), '    command: echo started; sleep 61; echo after'].join('\n'),
      });
      assert.equal(created.status, 201, created.text);
      const { dagRunId } = (await server.call('POST', '/dags/ct_execstop/start', {})).body;
      assert.ok(await waitUntil(async () => (await log('ct_execstop', dagRunId, 's').catch(() => '')).includes('started'), 15_000));
      assert.equal((await server.call('POST', `/dag-runs/ct_execstop/${dagRunId}/stop`)).status, 200);
      const result = await server.waitForRun('ct_execstop', dagRunId);
      assert.equal(result.nodes[0].status, 3, JSON.stringify(result.nodes[0]));
      assert.equal((await target.inspect()).State.Running, true, 'the container is not the step\'s: it runs on');
      const ps = await target.exec({ Cmd: ['ps', '-o', 'args'], AttachStdout: true, AttachStderr: true });
      const stream = await ps.start({ hijack: true, stdin: false });
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      await new Promise((resolve) => stream.once('end', resolve));
      assert.doesNotMatch(Buffer.concat(chunks).toString('utf8'), /sleep 61/, 'no process of the step is left in the container');
    } finally {
      await target.remove({ force: true });
    }
  });

  test('containerName alone fails when that container does not run', async () => {
    const result = await run('ct_nocontainer', ['steps:', '  - name: s', ...docker(['containerName: ct-nowhere']), '    command: echo hi'].join('\n'));
    assert.equal(result.nodes[0].status, 2);
    assert.match(result.nodes[0].error, /container "ct-nowhere" does not exist/);
    assert.match(await log('ct_nocontainer', result.dagRunId, 's', 'stderr'), /ct-nowhere/);
  });

  test('containerName with an image: exec when it runs, else a new container of that name', async () => {
    const spec = ['steps:', '  - name: s', ...docker(['containerName: ct-both', `image: ${BUSYBOX}`]), '    command: hostname; cat /marker 2>/dev/null || echo fresh'].join('\n');
    const fresh = await run('ct_both', spec);
    assert.equal(fresh.status, 4, JSON.stringify(fresh.nodes[0]));
    assert.match(await log('ct_both', fresh.dagRunId, 's'), /fresh/);
    assert.deepEqual(await managed(), [], 'the container made for the step is removed');

    const target = await engine.docker.createContainer({
      name: 'ct-both', Image: BUSYBOX, Cmd: ['sh', '-c', 'echo existing > /marker; while :; do sleep 1; done'], Labels: { [OURS]: 'true' }, HostConfig: { Init: true },
    });
    await target.start();
    try {
      const reused = await server.startAndWait('ct_both');
      assert.equal(reused.status, 4, JSON.stringify(reused.nodes[0]));
      assert.match(await log('ct_both', reused.dagRunId, 's'), /existing/);
    } finally {
      await target.remove({ force: true });
    }
  });

  test('autoRemove: false keeps the container the step made', async () => {
    const result = await run('ct_keep', ['steps:', '  - name: s', ...docker([`image: ${BUSYBOX}`, 'autoRemove: false']), '    command: echo kept'].join('\n'));
    assert.equal(result.status, 4);
    const kept = await managed();
    assert.equal(kept.length, 1);
    assert.equal(kept[0].State, 'exited');
    await engine.docker.getContainer(kept[0].Id).remove({ force: true });
  });

  test('a stopped step stops its container, which is then removed', async () => {
    const created = await server.call('POST', '/dags', {
      name: 'ct_stop',
      spec: ['steps:', '  - name: s', ...docker([`image: ${BUSYBOX}`]), '    command: echo started; sleep 60'].join('\n'),
    });
    assert.equal(created.status, 201, created.text);
    const started = await server.call('POST', '/dags/ct_stop/start', {});
    const { dagRunId } = started.body;
    assert.ok(await waitUntil(async () => (await log('ct_stop', dagRunId, 's').catch(() => '')).includes('started'), 15_000), 'the step runs');
    assert.ok(await waitUntil(async () => (await managed()).filter((c) => c.State === 'running').length === 1, 15_000), 'its container runs');
    const stop = await server.call('POST', `/dag-runs/ct_stop/${dagRunId}/stop`);
    assert.equal(stop.status, 200, stop.text);
    const result = await server.waitForRun('ct_stop', dagRunId);
    assert.equal(result.status, 3);
    assert.equal(result.nodes[0].status, 3);
    assert.deepEqual(await managed(), []);
  });

  test('a pull from a registry that cannot be reached fails the step with the daemon\'s message, credentials given', async () => {
    const result = await run('ct_pull', [
      'registryAuths:',
      '  127.0.0.1:9:',
      '    username: someone',
      '    password: not-printed-anywhere',
      'steps:',
      '  - name: s',
      ...docker(['image: 127.0.0.1:9/team/app:1', 'pull: always']),
      '    command: echo never',
    ].join('\n'));
    const node = result.nodes[0];
    assert.equal(node.status, 2);
    assert.match(node.error, /pull 127\.0\.0\.1:9\/team\/app:1: .*127\.0\.0\.1:9.*connection refused/);
    assert.doesNotMatch(JSON.stringify(result), /not-printed-anywhere/);
  });

  test('registryAuths: the pull sends the credentials of the image\'s registry, which the registry receives', async () => {
    // A registry on loopback, which the engine reaches over plain HTTP (127.0.0.0/8 is an insecure
    // registry by default): it asks for Basic credentials and knows no image.
    const seen: string[] = [];
    const registry = createServer((request, response) => {
      const authorization = request.headers.authorization;
      if (authorization) seen.push(Buffer.from(authorization.replace(/^Basic /, ''), 'base64').toString('utf8'));
      if (!authorization) {
        response.writeHead(401, { 'www-authenticate': 'Basic realm="troupe-test"', 'docker-distribution-api-version': 'registry/2.0', 'content-type': 'application/json' });
        response.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
      } else if (request.url === '/v2/') {
        response.writeHead(200, { 'docker-distribution-api-version': 'registry/2.0', 'content-type': 'application/json' });
        response.end('{}');
      } else {
        response.writeHead(404, { 'docker-distribution-api-version': 'registry/2.0', 'content-type': 'application/json' });
        response.end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}');
      }
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    const port = (registry.address() as AddressInfo).port;
    try {
      const result = await run('ct_auth', [
        'registryAuths:',
        `  127.0.0.1:${port}:`,
        '    username: someone',
        '    password: the-registry-password',
        '  other.example.com:',
        '    username: wrong',
        '    password: wrong',
        'steps:',
        '  - name: s',
        ...docker([`image: 127.0.0.1:${port}/team/app:1`]),
        '    command: echo never',
      ].join('\n'));
      const node = result.nodes[0];
      assert.equal(node.status, 2);
      assert.ok(seen.length > 0, 'the registry was asked with credentials');
      assert.ok(seen.every((credentials) => credentials === 'someone:the-registry-password'), seen.join(', '));
      assert.match(node.error, new RegExp(`pull 127\\.0\\.0\\.1:${port}/team/app:1: .*manifest unknown`));
      const logs = (await log('ct_auth', result.dagRunId, 's', 'stderr')) + await runLog('ct_auth', result.dagRunId);
      assert.doesNotMatch(logs + JSON.stringify(result), /the-registry-password/);
    } finally {
      registry.close();
    }
  });

  test('pull: never with an image that is not there fails with the daemon\'s message', async () => {
    const result = await run('ct_never', ['steps:', '  - name: s', ...docker(['image: troupe-test/absent:1', 'pull: never']), '    command: echo never'].join('\n'));
    assert.equal(result.nodes[0].status, 2);
    assert.match(result.nodes[0].error, /No such image: troupe-test\/absent:1/i);
  });

  test('validation: image or containerName, and the pull values', async () => {
    const validate = async (config: string[]) => (await server.call('POST', '/dags/validate', {
      spec: ['steps:', '  - name: s', ...docker(config), '    command: echo x'].join('\n'),
    })).body;
    const neither = await validate(['platform: linux/amd64']);
    assert.equal(neither.valid, false);
    assert.ok(neither.errors.some((error: string) => /needs image or containerName/.test(error)), JSON.stringify(neither));
    const badPull = await validate([`image: ${BUSYBOX}`, 'pull: sometimes']);
    assert.equal(badPull.valid, false);
    assert.ok(badPull.errors.some((error: string) => /pull/.test(error)), JSON.stringify(badPull));
    const unknown = await validate([`image: ${BUSYBOX}`, 'host:', '  privileged: true']);
    assert.equal(unknown.valid, false);
    assert.equal((await validate(['containerName: x'])).valid, true);
    assert.equal((await validate([`image: ${BUSYBOX}`, 'pull: never', 'autoRemove: false'])).valid, true);
    const dagLevel = (await server.call('POST', '/dags/validate', {
      spec: 'container:\n  image: x\n  waitFor: ready\n  ports: ["80", "web"]\n  startup: command\nsteps:\n  - command: echo x\n',
    })).body;
    assert.equal(dagLevel.valid, false);
    for (const field of ['waitFor', 'ports', 'command']) {
      assert.ok(dagLevel.errors.some((error: string) => error.includes(field)), `${field}: ${JSON.stringify(dagLevel)}`);
    }
    const noImage = (await server.call('POST', '/dags/validate', { spec: 'container:\n  workingDir: /w\nsteps:\n  - command: echo x\n' })).body;
    assert.ok(noImage.errors.some((error: string) => /container.*needs an image/.test(error)), JSON.stringify(noImage));
  });
  describe('the DAG-level container', () => {
    const containerNamed = async (prefix: string) => (await managed()).filter((c) => c.Names.some((name) => name.startsWith(`/troupe-${prefix}-`)));

    test('starts once; the steps run in it by exec and share it; relative volumes are read against workingDir; it goes at the end', async () => {
      const dagDir = join(work, 'dag-wd');
      const result = await run('ct_dag', [
        `workingDir: ${dagDir}`,
        'env:',
        '  - FROM_DAG: dag-value',
        'container:',
        `  image: ${BUSYBOX}`,
        '  env: [IN_CONTAINER=container-value]',
        '  volumes: ["./shared:/shared"]',
        '  workingDir: /shared',
        'steps:',
        '  - name: first',
        '    command: echo one > /tmp/file; echo "$IN_CONTAINER $FROM_DAG" > from-first.txt',
        '  - name: second',
        '    command: cat /tmp/file; pwd; cat /proc/1/cmdline | tr "\\0" " "',
        '    output: SEEN',
      ].join('\n'));
      assert.equal(result.status, 4, JSON.stringify(result));
      const second = await log('ct_dag', result.dagRunId, 'second');
      assert.match(second, /^one$/m, 'the second step sees the file the first wrote');
      assert.match(second, /^\/shared$/m);
      assert.equal(readFileSync(join(dagDir, 'shared', 'from-first.txt'), 'utf8'), 'container-value dag-value\n');
      assert.deepEqual(await containerNamed('ct_dag'), [], 'the container is removed after the run');
      // The run ends after its container is removed, not at its start (as the run log said once).
      assert.ok(Date.parse(result.finishedAt) >= Date.parse(result.nodes[1].finishedAt), `${result.finishedAt} < ${result.nodes[1].finishedAt}`);
    });

    test('keepContainer keeps it after the run; startup entrypoint, user, network and restartPolicy are the container\'s', async () => {
      const result = await run('ct_dagkeep', [
        'container:',
        '  image: troupe-test/service:1',
        '  startup: entrypoint',
        '  logPattern: service up',
        '  keepContainer: true',
        '  user: nobody',
        '  network: none',
        '  restartPolicy: unless-stopped',
        'steps:',
        '  - name: s',
        "    command: id -u; ps -o args | grep -q '[w]hile :' && echo image-command-runs",
      ].join('\n'));
      assert.equal(result.status, 4, JSON.stringify(result));
      assert.equal(await log('ct_dagkeep', result.dagRunId, 's'), '65534\nimage-command-runs', 'the step runs as the user, beside the image\'s own command');
      const kept = await containerNamed('ct_dagkeep');
      assert.equal(kept.length, 1);
      const info = await engine.docker.getContainer(kept[0].Id).inspect();
      assert.equal(info.State.Running, false, 'kept, stopped');
      assert.equal(info.HostConfig.RestartPolicy?.Name, 'unless-stopped');
      assert.equal(info.HostConfig.NetworkMode, 'none');
      await engine.docker.getContainer(kept[0].Id).remove({ force: true });
    });

    test('waitFor healthy waits for the image\'s healthcheck; startup command runs the given command', async () => {
      const result = await run('ct_healthy', [
        'container:',
        '  image: troupe-test/healthy:1',
        '  waitFor: healthy',
        '  startup: command',
        '  command: ["sh", "-c", "echo booting; echo READY now; while :; do sleep 1; done"]',
        '  logPattern: "^READY"',
        'steps:',
        '  - command: echo ran after ready',
      ].join('\n'));
      assert.equal(result.status, 4, JSON.stringify(result));
      assert.deepEqual(await containerNamed('ct_healthy'), []);
    });

    test('a container that exits before its log matches fails the run, naming its state', async () => {
      const result = await run('ct_exits', [
        'container:',
        `  image: ${BUSYBOX}`,
        '  startup: command',
        '  command: ["sh", "-c", "echo booting; exit 3"]',
        '  logPattern: READY',
        'steps:',
        '  - name: s',
        '    command: echo never',
      ].join('\n'));
      assert.equal(result.status, 2, JSON.stringify(result));
      // Whether the exit is seen while waiting for `running` or while reading the log depends on timing; both say so.
      assert.match(await runLog('ct_exits', result.dagRunId), /container did not start.*(the container stopped before it was ready \(status exited, exit code 3\)|the container's log ended before a line matched \\"READY\\"; last state: status exited, exit code 3)/);
      assert.equal(result.nodes[0].status, 0, 'no step ran');
      assert.deepEqual(await containerNamed('ct_exits'), [], 'what was made is removed');
    });

    test('a container whose command cannot start fails the run, naming its state', async () => {
      const result = await run('ct_nostart', [
        'container:',
        `  image: ${BUSYBOX}`,
        '  startup: command',
        '  command: ["/no/such/program"]',
        'steps:',
        '  - name: s',
        '    command: echo never',
      ].join('\n'));
      assert.equal(result.status, 2, JSON.stringify(result));
      // Seen running before its command fails, it passes the readiness check; the step's exec then finds it stopped (Docker may name its state: "Exited (127) ...").
      assert.match(await runLog('ct_nostart', result.dagRunId), /container did not start.*the container stopped before it was ready \(status exited, exit code 127\)|is not running(: Exited \(127\)[^"(]*)? \(status exited, exit code 127\)/);
      assert.notEqual(result.nodes[0].status, 4, 'the step did not succeed');
      assert.deepEqual(await containerNamed('ct_nostart'), []);
    });

    test('a logPattern that never matches fails the run at the readiness limit, naming the last state', async () => {
      const result = await run('ct_pattern', [
        'container:',
        `  image: ${BUSYBOX}`,
        '  logPattern: NEVER-PRINTED',
        'steps:',
        '  - name: s',
        '    command: echo never',
      ].join('\n'));
      assert.equal(result.status, 2, JSON.stringify(result));
      assert.match(await runLog('ct_pattern', result.dagRunId), /no log line matched \\"NEVER-PRINTED\\" after 3 s; last state: status running/);
      assert.deepEqual(await containerNamed('ct_pattern'), []);
    });

    test('an image that cannot be pulled fails the run with the daemon\'s message', async () => {
      const result = await run('ct_dagpull', [
        'container:',
        '  image: 127.0.0.1:9/team/app:1',
        'steps:',
        '  - command: echo never',
      ].join('\n'));
      assert.equal(result.status, 2, JSON.stringify(result));
      assert.match(await runLog('ct_dagpull', result.dagRunId), /pull 127\.0\.0\.1:9\/team\/app:1: .*connection refused/);
    });

    test('a stop while the container is being readied aborts the run and removes the container', async () => {
      const created = await server.call('POST', '/dags', {
        name: 'ct_startstop',
        spec: ['container:', `  image: ${BUSYBOX}`, '  logPattern: NOT-YET', 'steps:', '  - name: s', '    command: echo never'].join('\n'),
      });
      assert.equal(created.status, 201, created.text);
      const { dagRunId } = (await server.call('POST', '/dags/ct_startstop/start', {})).body;
      assert.ok(await waitUntil(async () => (await containerNamed('ct_startstop')).some((c) => c.State === 'running'), 15_000), 'the container runs');
      assert.equal((await server.call('POST', `/dag-runs/ct_startstop/${dagRunId}/stop`)).status, 200);
      const result = await server.waitForRun('ct_startstop', dagRunId);
      assert.equal(result.status, 3, JSON.stringify(result));
      assert.equal(result.nodes[0].status, 0, 'no step ran');
      // The run ends after its container is removed: the removal waits for the start it stopped.
      assert.deepEqual(await containerNamed('ct_startstop'), [], 'the container is removed');
    });

    test('a stop while the steps run ends the exec and the run, and removes the container', async () => {
      const created = await server.call('POST', '/dags', {
        name: 'ct_dagstop',
        spec: ['container:', `  image: ${BUSYBOX}`, 'steps:', '  - name: s', '    command: echo started; sleep 60'].join('\n'),
      });
      assert.equal(created.status, 201, created.text);
      const { dagRunId } = (await server.call('POST', '/dags/ct_dagstop/start', {})).body;
      assert.ok(await waitUntil(async () => (await log('ct_dagstop', dagRunId, 's').catch(() => '')).includes('started'), 15_000), 'the step runs');
      assert.equal((await server.call('POST', `/dag-runs/ct_dagstop/${dagRunId}/stop`)).status, 200);
      const result = await server.waitForRun('ct_dagstop', dagRunId);
      assert.equal(result.status, 3, JSON.stringify(result));
      assert.equal(result.nodes[0].status, 3);
      assert.deepEqual(await containerNamed('ct_dagstop'), []);
    });
  });

  test('the example of docs/executors/container.md runs as it says', async () => {
    const page = readFileSync(new URL('../docs/executors/container.md', import.meta.url), 'utf8');
    const example = /```yaml\n# dags\/container-demo\.yaml\n([\s\S]*?)```/.exec(page)?.[1];
    assert.ok(example, 'the page has the example');
    await engine.docker.getImage(BUSYBOX).tag({ repo: 'busybox', tag: 'latest' });
    const result = await run('container-demo', example);
    assert.equal(result.status, 6, JSON.stringify(result.nodes));
    assert.equal(result.nodes[0].status, 4);
    assert.match(await log('container-demo', result.dagRunId, 'in-a-new-container'), /^hello from [0-9a-f]{12} in \/tmp\n?$/);
    assert.match(await log('container-demo', result.dagRunId, 'exit-code'), /^hello from [0-9a-f]{12} in \/tmp, again\n?$/);
    assert.match(await log('container-demo', result.dagRunId, 'exit-code', 'stderr'), /this line goes to the stderr log/);
    assert.equal(result.nodes[1].status, 2);
    assert.match(result.nodes[1].error, /exit status 3/);
    assert.deepEqual(await managed(), []);
  });

  test('no container made by a step or a run is left behind', async () => {
    assert.deepEqual((await managed()).map((c) => `${c.Names.join(',')} ${c.State}`), []);
  });
});

// The troupe command as users run it: start-all, an example DAG on first start, SIGTERM shutdown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkedFetch, waitUntil } from './helpers.ts';
import { cli, exited, startCli } from './cli-process.ts';
import { RELAYED_MS } from '../src/cli/stop-signals.ts';

async function getJson(url: string, init?: RequestInit): Promise<any> {
  return (await checkedFetch(url, init)).json();
}


test('start-all writes an example on first start, and SIGTERM stops runs, records them aborted and exits 0', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const { child, base } = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  assert.deepEqual((await readdir(join(home, 'dags'))).sort(), ['example.yaml']);
  assert.deepEqual(await readdir(home).then((entries) => entries.sort()), ['dags', 'data', 'logs']);

  const example = await getJson(`${base}/dags/example/start`, { method: 'POST', body: '{}' });
  await waitUntil(async () => (await getJson(`${base}/dag-runs/example/${example.dagRunId}`)).dagRun.status === 4);

  await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'long', spec: 'steps:\n  - name: wait\n    command: sleep 120\n' }) });
  const { dagRunId } = await getJson(`${base}/dags/long/start`, { method: 'POST', body: '{}' });
  assert.ok(await waitUntil(async () => (await getJson(`${base}/dag-runs/long/${dagRunId}`)).dagRun.nodes[0].status === 1));

  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);

  // A second start over the same home finds the run recorded aborted, its step too.
  const again = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (again.child.exitCode === null) again.child.kill('SIGKILL'); });
  const run = (await getJson(`${again.base}/dag-runs/long/${dagRunId}`)).dagRun;
  assert.deepEqual([run.statusLabel, run.nodes[0].statusLabel, run.nodes[0].error], ['aborted', 'aborted', 'signal: SIGTERM']);
  assert.deepEqual((await readdir(join(home, 'dags'))).sort(), ['example.yaml', 'long.yaml'], 'no second example on a later start');
  again.child.kill('SIGINT');
  assert.equal(await exited(again.child), 0);
});

test('flags win over TROUPE_* variables, which win over the config file', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-cfg-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(home, 'config.yaml'), 'port: 1\ndags: from-file\n');
  const { child, base, output } = await startCli(['--port', '0'], { TROUPE_HOME: home, TROUPE_DAGS: join(home, 'from-env') });
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  assert.match(output(), new RegExp(`home ${home}`));
  assert.notEqual(new URL(base).port, '1');
  assert.deepEqual(await readdir(join(home, 'from-env')), ['example.yaml']);
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);
});

test('a key troupe does not use is named in a warning and the server starts; a bad value is a clear error and exit code 1', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-bad-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  // Dagu's paths block names the folders; `prot` and `paths.baseConfig` are not troupe's.
  await writeFile(join(home, 'config.yaml'), 'prot: 9000\npaths:\n  dagsDir: from-paths\n  baseConfig: base.yaml\n');
  const { child, output } = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  assert.match(output(), /"level":"warn".*ignoring keys troupe does not use: prot, paths\.baseConfig/);
  assert.deepEqual(await readdir(join(home, 'from-paths')), ['example.yaml']);
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);

  await writeFile(join(home, 'config.yaml'), 'port: ninety\n');
  const bad = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  bad.stderr!.on('data', (chunk) => { stderr += chunk; });
  assert.equal(await exited(bad), 1);
  assert.equal(stderr.trim(), 'troupe: invalid port "ninety"');
});

test('SIGTERM the moment the listening line appears still shuts down cleanly (regression: handlers came after the line)', async (t) => {
  for (let attempt = 0; attempt < 3; attempt++) {
    const home = await mkdtemp(join(tmpdir(), 'troupe-race-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', home, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let sent = false;
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (!sent && output.includes('listening on')) {
        sent = true;
        child.kill('SIGTERM');
      }
    });
    assert.equal(await exited(child), 0, output);
    assert.match(output, /SIGTERM received/);
  }
});

for (const spawnMode of ['posix_spawn', 'child_process']) {
  test(`a server killed with SIGKILL leaves no step process behind (steps started with ${spawnMode})`, async (t) => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-crash-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const { child, base, output } = await startCli(['--home', home, '--port', '0'], spawnMode === 'child_process' ? { TROUPE_SPAWN: 'child_process' } : {});
    t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
    if (spawnMode === 'posix_spawn' && !process.env.CI && !output().includes('steps start with posix_spawn')) {
      t.skip('the posix_spawn addon is not built here');
      return;
    }
    assert.match(output(), new RegExp(`steps start with ${spawnMode}`));
    const marker = `troupe-crash-orphan-${process.pid}-${Date.now()}-${spawnMode}`;
    await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'orphan', spec: `steps:\n  - command: bash -c 'exec -a ${marker} sleep 60' & sleep 60\n` }) });
    await getJson(`${base}/dags/orphan/start`, { method: 'POST', body: '{}' });
    assert.ok(await waitUntil(async () => processesNamed(marker) === 1), 'the step and its grandchild run');
    child.kill('SIGKILL');
    await exited(child);
    assert.ok(await waitUntil(async () => processesNamed(marker) === 0, 10_000), 'the step host stopped the group');
  });
}

for (const spawnMode of ['posix_spawn', 'child_process']) {
  test(`a step inherits no descriptor of the server beyond stdin, stdout and stderr (steps started with ${spawnMode})`, async (t) => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-fds-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const { child, base } = await startCli(['--home', home, '--port', '0'], spawnMode === 'child_process' ? { TROUPE_SPAWN: 'child_process' } : {});
    t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
    await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'fds', spec: 'steps:\n  - name: list\n    command: ls -l /proc/self/fd\n' }) });
    const { dagRunId } = await getJson(`${base}/dags/fds/start`, { method: 'POST', body: '{}' });
    assert.ok(await waitUntil(async () => (await getJson(`${base}/dag-runs/fds/${dagRunId}`)).dagRun.status === 4), 'the run succeeds');
    const log = await getJson(`${base}/dag-runs/fds/${dagRunId}/steps/list/log`);
    const fds = String(log.content).split('\n').map((line) => /(\d+) -> (.*)$/.exec(line)).filter((match) => match !== null)
      .map((match) => ({ fd: Number(match![1]), target: match![2] }));
    // ls itself holds one more: the /proc/self/fd listing it reads.
    assert.deepEqual(fds.filter(({ fd, target }) => fd > 2 && !target.startsWith('/proc/')), [], log.content);
    assert.ok(!String(log.content).includes('data.mdb'), log.content);
  });
}

test('a step started before its step host died is still stopped when the server is killed (the successor host guards it)', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-crash-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const { child, base, output } = await startCli(['--home', home, '--port', '0'], {});
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  if (!process.env.CI && !output().includes('steps start with posix_spawn')) {
    t.skip('the posix_spawn addon is not built here');
    return;
  }
  const marker = `troupe-successor-orphan-${process.pid}-${Date.now()}`;
  await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'orphan', spec: `steps:\n  - command: bash -c 'exec -a ${marker} sleep 60' & sleep 60\n` }) });
  await getJson(`${base}/dags/orphan/start`, { method: 'POST', body: '{}' });
  assert.ok(await waitUntil(async () => processesNamed(marker) === 1), 'the step and its grandchild run');
  const [first] = stepHostsOf(child.pid!);
  assert.ok(first, 'the server has a step host');
  process.kill(first, 'SIGKILL');
  assert.ok(await waitUntil(async () => stepHostsOf(child.pid!).some((pid) => pid !== first)), 'a successor host starts while the step runs');
  assert.equal(processesNamed(marker), 1, 'the step outlives the host that died');
  child.kill('SIGKILL');
  await exited(child);
  assert.ok(await waitUntil(async () => processesNamed(marker) === 0, 10_000), 'the successor stopped the group');
});

/** Step host processes whose parent is `serverPid`. */
function stepHostsOf(serverPid: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' });
  return out.split('\n').map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, ...args]) => ppid === String(serverPid) && args.join(' ').includes('step-host'))
    .map(([pid]) => Number(pid));
}

function processesNamed(marker: string): number {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.startsWith(marker)).length;
}

test('--http picks the carrier over TROUPE_HTTP and config.yaml; on uWS one line names its limits', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-http-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(home, 'config.yaml'), 'http: uws\n');
  const node = await startCli(['--home', home, '--port', '0', '--http', 'node'], { TROUPE_HTTP: 'uws' });
  t.after(() => { if (node.child.exitCode === null) node.child.kill('SIGKILL'); });
  assert.match(node.output(), /\/api\/v2 \(node\)/);
  assert.doesNotMatch(node.output(), /HTTP\/1\.0/);
  node.child.kill('SIGTERM');
  assert.equal(await exited(node.child), 0);

  const uws = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (uws.child.exitCode === null) uws.child.kill('SIGKILL'); });
  assert.match(uws.output(), /\/api\/v2 \(uws\)/);
  // The warning goes to stderr, which may reach us after the listening line on stdout.
  assert.ok(await waitUntil(() => uws.output().includes('--http node')));
  assert.equal(uws.output().split('\n').filter((line) => /uWebSockets\.js.*HTTP\/1\.0.*pipelined.*--http node/.test(line)).length, 1);
  uws.child.kill('SIGTERM');
  assert.equal(await exited(uws.child), 0);
});

test('with --shutdown-grace, SIGTERM admits no run, lets the active one finish, and the API answers meanwhile', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const { child, base, output } = await startCli(['--home', home, '--port', '0', '--shutdown-grace', '30']);
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const gate = join(home, 'gate');
  await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'gated', spec: `steps:\n  - name: wait\n    command: sh -c 'while [ ! -f ${gate} ]; do sleep 0.05; done'\n` }) });
  const { dagRunId } = await getJson(`${base}/dags/gated/start`, { method: 'POST', body: '{}' });
  assert.ok(await waitUntil(async () => (await getJson(`${base}/dag-runs/gated/${dagRunId}`)).dagRun.nodes[0].status === 1));

  child.kill('SIGTERM');
  assert.ok(await waitUntil(() => /admitting no runs; active runs have 30 s to finish/.test(output())), output());
  const refused = await checkedFetch(`${base}/dags/gated/start`, { method: 'POST', body: '{"dagRunId":"late"}' });
  assert.equal(refused.status, 500);
  assert.match(((await refused.json()) as { message: string }).message, /shutting down/);
  assert.equal((await getJson(`${base}/dag-runs/gated/${dagRunId}`)).dagRun.statusLabel, 'running', 'the API answers while the run finishes');
  await writeFile(gate, '');
  assert.equal(await exited(child), 0);

  const again = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (again.child.exitCode === null) again.child.kill('SIGKILL'); });
  assert.equal((await getJson(`${again.base}/dag-runs/gated/${dagRunId}`)).dagRun.statusLabel, 'succeeded');
  assert.equal((await checkedFetch(`${again.base}/dag-runs/gated/late`)).status, 404, 'the refused start left nothing');
  again.child.kill('SIGTERM');
  assert.equal(await exited(again.child), 0);
});

test('a second signal during the shutdown grace stops the active runs at once, recorded aborted', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const { child, base, output } = await startCli(['--home', home, '--port', '0'], { TROUPE_SHUTDOWN_GRACE_SEC: '300' });
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'long', spec: 'steps:\n  - name: wait\n    command: sleep 120\n' }) });
  const { dagRunId } = await getJson(`${base}/dags/long/start`, { method: 'POST', body: '{}' });
  assert.ok(await waitUntil(async () => (await getJson(`${base}/dag-runs/long/${dagRunId}`)).dagRun.nodes[0].status === 1));
  child.kill('SIGTERM');
  assert.ok(await waitUntil(() => /300 s to finish/.test(output())), output());
  // A signal right after the first is taken as that one relayed (npm start): this one comes later.
  await sleep(RELAYED_MS + 200);
  child.kill('SIGINT');
  assert.equal(await exited(child), 0);
  assert.match(output(), /SIGINT received, stopping runs now/);

  const again = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (again.child.exitCode === null) again.child.kill('SIGKILL'); });
  const run = (await getJson(`${again.base}/dag-runs/long/${dagRunId}`)).dagRun;
  assert.deepEqual([run.statusLabel, run.nodes[0].statusLabel], ['aborted', 'aborted']);
  again.child.kill('SIGTERM');
  assert.equal(await exited(again.child), 0);
});

test('config.yaml queues are custom queues; SIGHUP reloads their limits, and a bad file leaves them as they were', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-queues-config-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const config = (limit: number) => `queues:\n  enabled: true\n  config:\n    - name: cfq\n      maxConcurrency: ${limit}\n    - name: other\n      maxActiveRuns: 2\n`;
  await writeFile(join(home, 'config.yaml'), config(1));
  const { child, base, output } = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const limits = async () => Object.fromEntries((await getJson(`${base}/queues`)).queues.map((queue: any) => [queue.name, [queue.type, queue.maxConcurrency]]));
  assert.deepEqual(await limits(), { cfq: ['custom', 1], other: ['custom', 2] });
  await writeFile(join(home, 'config.yaml'), config(3));
  child.kill('SIGHUP');
  assert.ok(await waitUntil(async () => (await limits()).cfq[1] === 3), output());
  // The line is written as the limits change, and reaches the pipe a moment later.
  assert.ok(await waitUntil(() => /SIGHUP: queues reloaded: cfq=3, other=2/.test(output())), output());
  await writeFile(join(home, 'config.yaml'), 'queues:\n  config:\n    - name: cfq\n      maxConcurrency: 0\n');
  child.kill('SIGHUP');
  assert.ok(await waitUntil(() => /configuration not reloaded: .*maxConcurrency must be an integer of at least 1/.test(output())), output());
  assert.deepEqual(await limits(), { cfq: ['custom', 3], other: ['custom', 2] });
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);
});

test('a config.yaml with a bad queue stops the start with one line naming it', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-queues-bad-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  for (const [yaml, problem] of [
    ['queues:\n  config:\n    - name: bad name\n', /queues: config\[0\]: queue name must only contain/],
    ['queues:\n  config:\n    - name: a\n    - name: a\n', /queue a is configured twice/],
    ['queues:\n  enabled: maybe\n', /enabled must be true or false/],
    ['queues:\n  config:\n    - name: a\n      size: 3\n', /config\[0\]: unknown key "size"/],
  ] as const) {
    await writeFile(join(home, 'config.yaml'), yaml);
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', home, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr!.on('data', (chunk) => { output += chunk; });
    assert.equal(await exited(child), 1);
    assert.match(output, problem);
    assert.equal(output.trim().split('\n').length, 1, output);
  }
});

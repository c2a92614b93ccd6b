// troupe behind a process manager. SIGTERM to `npm start` stops the server cleanly;
// a port that cannot be taken gives the reason, exits 1 and leaves nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkedFetch, waitUntil } from './helpers.ts';
import { cli, exited, startCli } from './cli-process.ts';

const root = resolve(import.meta.dirname, '..');

async function getJson(url: string, init?: RequestInit): Promise<any> {
  return (await checkedFetch(url, init)).json();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// `npm`: a process manager signals npm alone, which passes the signal on. `group`: Ctrl-C in the
// terminal signals npm's whole process group, so troupe gets it from the terminal and again from
// npm: the same one, not a second signal (which would end troupe before it had stopped its runs).
for (const [to, signal] of [['npm', 'SIGTERM'], ['group', 'SIGINT']] as const) {
test(`${signal} to \`npm start\` (${to === 'npm' ? 'npm alone' : 'its process group'}) reaches troupe: its running step is recorded aborted, and nothing is left running`, async (t) => {
  assert.ok(existsSync(join(root, 'dist', 'cli', 'main.js')), 'npm start runs dist/: npm ci builds it');
  const home = await mkdtemp(join(tmpdir(), 'troupe-npm-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: root, env: { ...process.env, TROUPE_HOME: home, TROUPE_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: to === 'group',
  });
  t.after(() => { if (npm.exitCode === null) npm.kill('SIGKILL'); });
  let output = '';
  npm.stdout!.on('data', (chunk) => { output += chunk; });
  npm.stderr!.on('data', (chunk) => { output += chunk; });
  assert.ok(await waitUntil(() => /listening on http:\/\/[^ ]+\/api\/v2/.test(output), 30_000), output);
  const base = /listening on (http:\/\/[^ ]+\/api\/v2)/.exec(output)![1];
  const server = Number((await readFile(join(home, 'data', 'troupe.lock'), 'utf8')).match(/"pid":\s*(\d+)/)![1]);
  assert.notEqual(server, npm.pid, 'troupe runs as a child of npm');
  // Were it left running, it would hold this test's pipes open.
  t.after(() => { if (alive(server)) process.kill(server, 'SIGKILL'); });

  await checkedFetch(`${base}/dags`, { method: 'POST', body: JSON.stringify({ name: 'long', spec: 'steps:\n  - name: wait\n    command: sleep 120\n' }) });
  const { dagRunId } = await getJson(`${base}/dags/long/start`, { method: 'POST', body: '{}' });
  assert.ok(await waitUntil(async () => (await getJson(`${base}/dag-runs/long/${dagRunId}`)).dagRun.nodes[0].status === 1));

  if (to === 'npm') npm.kill(signal);
  else process.kill(-npm.pid!, signal);
  // npm's exit code when the group was signalled is its own (it was signalled too): troupe's is in its log.
  const code = await exited(npm);
  if (to === 'npm') assert.equal(code, 0, output);
  assert.ok(await waitUntil(() => /"msg":"stopped"/.test(output), 20_000), output);
  assert.match(output, new RegExp(`${signal} received, stopping runs and shutting down`));
  assert.ok(await waitUntil(() => !alive(server)), 'the server process has ended');
  assert.equal(existsSync(join(home, 'data', 'troupe.lock')), false, 'the home lock is released');

  const again = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (again.child.exitCode === null) again.child.kill('SIGKILL'); });
  const run = (await getJson(`${again.base}/dag-runs/long/${dagRunId}`)).dagRun;
  assert.deepEqual([run.statusLabel, run.nodes[0].error], ['aborted', 'signal: SIGTERM']);
  again.child.kill('SIGTERM');
  assert.equal(await exited(again.child), 0);
});
}

for (const carrier of ['uws', 'node']) {
  test(`a port in use (${carrier}): one line naming the port and the reason, exit 1, and the home left free`, async (t) => {
    const first = await mkdtemp(join(tmpdir(), 'troupe-port-a-'));
    const second = await mkdtemp(join(tmpdir(), 'troupe-port-b-'));
    t.after(() => Promise.all([rm(first, { recursive: true, force: true }), rm(second, { recursive: true, force: true })]));
    const holder = await startCli(['--home', first, '--port', '0']);
    t.after(() => { if (holder.child.exitCode === null) holder.child.kill('SIGKILL'); });
    const port = new URL(holder.base).port;

    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', second, '--port', port, '--http', carrier], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => { stderr += chunk; });
    assert.equal(await exited(child), 1);
    assert.match(stderr, new RegExp(`troupe: cannot listen on 127\\.0\\.0\\.1:${port}: port ${port} on 127\\.0\\.0\\.1 is in use by another process`));
    assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
    assert.equal(existsSync(join(second, 'data', 'troupe.lock')), false, 'the home lock is released');

    // The same home serves at once on a free port.
    const next = await startCli(['--home', second, '--port', '0', '--http', carrier]);
    next.child.kill('SIGTERM');
    assert.equal(await exited(next.child), 0);
    holder.child.kill('SIGTERM');
    assert.equal(await exited(holder.child), 0);
  });
}

test('the compiled build that npm start runs loads every module under plain node (no TypeScript loader)', () => {
  // tsx forgives what node refuses: a named import that a CommonJS package does not declare
  // statically (ssh2's `utils`) loads under tsx and fails the pool's worker threads under node.
  for (const module of ['dist/cli/main.js', 'dist/cli/bundle/main.js', 'dist/executors/worker.js', 'dist/executors/step-host.js']) {
    assert.ok(existsSync(join(root, module)), `${module} is built (npm ci builds it)`);
  }
  // The command's bundle too (scripts/bundle-cli.mjs): each of its chunks, the verbs' that no other test runs included.
  const bundle = join(root, 'dist/cli/bundle');
  const check = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { readdirSync } from 'node:fs';
    await import(${JSON.stringify(join(root, 'dist/executors/worker.js'))});
    await import(${JSON.stringify(join(root, 'dist/main.js'))});
    for (const file of readdirSync(${JSON.stringify(bundle)}).filter((name) => name.endsWith('.js') && name !== 'main.js')) await import(${JSON.stringify(bundle)} + '/' + file);
  `], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  assert.equal(check.status, 0, check.stderr);
});

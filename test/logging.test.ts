// the server's log is JSON lines on stdout (pino): a line per run start and end,
// a line per request only at debug level, a level setting, and never a secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedFetch, waitUntil } from './helpers.ts';
import { cli, exited, startCli } from './cli-process.ts';

const SECRET = 'log-S3CRET-9f2c';

async function post(url: string, body: unknown): Promise<any> {
  return (await checkedFetch(url, { method: 'POST', body: JSON.stringify(body) })).json();
}

/** Every line the server printed on stdout, parsed: each must be one JSON object. */
function lines(output: string): any[] {
  return output.split('\n').filter((line) => line.trim() !== '').map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      assert.fail(`not a JSON line: ${line}`);
    }
  });
}

test('every line is JSON; a run logs its start and its end with status and duration; at debug a line per request; no secret', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const server = await startCli(['--home', home, '--port', '0', '--log-level', 'debug'], { LOG_TEST_TOKEN: SECRET });
  t.after(() => { if (server.child.exitCode === null) server.child.kill('SIGKILL'); });
  const spec = [
    'secrets:', '  - name: TOKEN', '    provider: env', '    key: LOG_TEST_TOKEN',
    'steps:', '  - name: leak', '    command: echo "${TOKEN}"; echo "bad ${TOKEN}" >&2; exit 4',
  ].join('\n');
  assert.ok((await post(`${server.base}/dags`, { name: 'logged', spec })).name);
  const { dagRunId } = await post(`${server.base}/dags/logged/start`, {});
  assert.ok(await waitUntil(() => lines(server.output().split('\n').filter((line) => line.startsWith('{')).join('\n'))
    .some((line) => line.msg === 'run ended' && line.dagRunId === dagRunId)));
  await checkedFetch(`${server.base}/health`);
  server.child.kill('SIGTERM');
  assert.equal(await exited(server.child), 0);

  // The log is stdout, one JSON object per line.
  const stdout = server.output().split('\n').filter((line) => line.startsWith('{')).join('\n');
  const logged = lines(stdout);
  for (const line of logged) {
    assert.equal(typeof line.level, 'string');
    assert.ok(!Number.isNaN(Date.parse(line.time)), JSON.stringify(line));
    assert.equal(typeof line.msg, 'string');
  }
  const started = logged.find((line) => line.msg === 'run started' && line.dagRunId === dagRunId);
  const ended = logged.find((line) => line.msg === 'run ended' && line.dagRunId === dagRunId);
  assert.deepEqual([started?.level, started?.dag], ['info', 'logged']);
  assert.deepEqual([ended?.level, ended?.dag, ended?.status], ['info', 'logged', 'failed']);
  assert.equal(typeof ended.durationMs, 'number');
  const requests = logged.filter((line) => line.msg === 'request');
  assert.ok(requests.some((line) => line.level === 'debug' && line.method === 'POST' && line.route === '/dags/:fileName/start' && line.status === 200), JSON.stringify(requests));
  assert.ok(requests.some((line) => line.route === '/health'), 'at debug, health checks are logged too');
  assert.ok(logged.some((line) => /listening on http/.test(line.msg) && line.url === server.base));
  assert.ok(logged.some((line) => line.msg === 'stopped'));
  assert.ok(!server.output().includes(SECRET), 'no secret in the log');
});

test('at the default level no request is logged, health checks included; the run lines are', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const server = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (server.child.exitCode === null) server.child.kill('SIGKILL'); });
  for (let i = 0; i < 5; i++) await checkedFetch(`${server.base}/health`);
  const { dagRunId } = await post(`${server.base}/dags/example/start`, {});
  assert.ok(await waitUntil(() => server.output().includes(`"dagRunId":"${dagRunId}","status":"succeeded"`)));
  server.child.kill('SIGTERM');
  assert.equal(await exited(server.child), 0);
  const logged = lines(server.output().split('\n').filter((line) => line.startsWith('{')).join('\n'));
  assert.equal(logged.filter((line) => line.msg === 'request').length, 0);
  assert.ok(logged.every((line) => line.level !== 'debug'));
});

test('a log level that does not exist is a one-line error and exit code 1', async () => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', home, '--log-level', 'chatty'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => { stderr += chunk; });
    assert.equal(await exited(child), 1);
    assert.equal(stderr.trim(), 'troupe: log level must be one of debug, info, warn, error, silent, not "chatty"');
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

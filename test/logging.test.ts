// the server's log is JSON lines on stdout (pino): a line per run start and end,
// a line per request only at debug level, a level setting, and never a secret; text lines instead
// on a terminal or when asked (logFormat), JSON when asked or when stdout is no terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

/** A text line: local time, level, message, then the fields as JSON. */
const TEXT_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (DEBUG|INFO|WARN|ERROR): /;

test('logFormat text (config.yaml): a text line per event with its fields, no JSON line, no secret, control characters escaped', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  // A key troupe does not use is named in a warning line: here one that would forge a line and colour the terminal.
  await writeFile(join(home, 'config.yaml'), 'logFormat: text\n"odd\\e[31mkey\\n[00:00:00.000] INFO: forged": 1\n');
  const server = await startCli(['--home', home, '--port', '0', '--log-level', 'debug'], { LOG_TEST_TOKEN: SECRET });
  t.after(() => { if (server.child.exitCode === null) server.child.kill('SIGKILL'); });
  const spec = [
    'secrets:', '  - name: TOKEN', '    provider: env', '    key: LOG_TEST_TOKEN',
    'steps:', '  - name: leak', '    command: echo "${TOKEN}"; echo "bad ${TOKEN}" >&2; exit 4',
  ].join('\n');
  assert.ok((await post(`${server.base}/dags`, { name: 'logged', spec })).name);
  const { dagRunId } = await post(`${server.base}/dags/logged/start`, {});
  assert.ok(await waitUntil(() => server.output().includes(`run ended {"dag":"logged","dagRunId":"${dagRunId}"`)), server.output());
  server.child.kill('SIGTERM');
  assert.equal(await exited(server.child), 0);

  const printed = server.output().split('\n').filter((line) => line !== '');
  for (const line of printed) assert.match(line, TEXT_LINE);
  assert.ok(printed.some((line) => / INFO: run started \{"dag":"logged","dagRunId":"[^"]+"\}$/.test(line)), server.output());
  assert.ok(printed.some((line) => new RegExp(` INFO: run ended \\{"dag":"logged","dagRunId":"${dagRunId}","status":"failed","durationMs":\\d+\\}$`).test(line)), server.output());
  assert.ok(printed.some((line) => / DEBUG: request \{"method":"POST","route":"\/dags\/:fileName\/start","status":200/.test(line)), server.output());
  assert.ok(printed.some((line) => / INFO: stopped$/.test(line)), server.output());
  const warning = printed.find((line) => line.includes('ignoring keys'));
  assert.ok(warning?.includes(' WARN: config file: ignoring keys troupe does not use: odd\\u001b[31mkey\\u000a[00:00:00.000] INFO: forged'), warning);
  assert.ok(!server.output().includes('\x1b'), 'no terminal escape is printed');
  assert.ok(!server.output().includes(SECRET), 'no secret in the log');
});

test('logFormat json (--log-format) wins over TROUPE_LOG_FORMAT; auto with stdout no terminal is JSON lines', async (t) => {
  for (const [args, env] of [[['--log-format', 'json'], { TROUPE_LOG_FORMAT: 'text' }], [[], { TROUPE_LOG_FORMAT: 'auto' }]] as const) {
    const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const server = await startCli(['--home', home, '--port', '0', ...args], env);
    t.after(() => { if (server.child.exitCode === null) server.child.kill('SIGKILL'); });
    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0);
    const logged = lines(server.output());
    assert.ok(logged.some((line) => /listening on http/.test(line.msg)), server.output());
    assert.ok(logged.some((line) => line.msg === 'stopped'), server.output());
  }
});

test('on a terminal the log is text lines by default, in colour', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  // A pseudo-terminal made by `script` (util-linux); what is written to its stdin is typed there,
  // and Ctrl-C becomes SIGINT for the server.
  const command = [process.execPath, '--import', 'tsx', cli, 'start-all', '--home', home, '--port', '0'].map((word) => `'${word}'`).join(' ');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TROUPE_') && key !== 'NO_COLOR'));
  const child = spawn('script', ['-qec', `exec ${command}`, '/dev/null'], { env: { ...env, TERM: 'xterm', SHELL: '/bin/sh' }, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let screen = '';
  child.stdout.on('data', (chunk) => { screen += chunk; });
  child.stderr.on('data', (chunk) => { screen += chunk; });
  assert.ok(await waitUntil(() => screen.includes('listening on'), 30_000), screen);
  child.stdin.write('\x03');
  assert.equal(await exited(child), 0, screen);
  // The terminal echoes the Ctrl-C typed (^C) before the next line.
  const printed = screen.split('\r\n').map((line) => line.replace(/^\^C/, '')).filter((line) => line !== '');
  assert.ok(printed.length >= 3, screen);
  for (const line of printed) assert.match(line, /^\[\d\d:\d\d:\d\d\.\d{3}\] \x1b\[\d+m(INFO|WARN)\x1b\[39m: /, line);
  assert.match(screen, /listening on http:\/\/127\.0\.0\.1:\d+\/api\/v2 [^\r]* \x1b\[90m\{"url":"http/);
  assert.match(screen, /INFO\x1b\[39m: \x1b\[36mstopped/);
});

test('a log format that does not exist is a one-line error and exit code 1', async () => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-log-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', home, '--log-format', 'pretty'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => { stderr += chunk; });
    assert.equal(await exited(child), 1);
    assert.equal(stderr.trim(), 'troupe: log format must be one of auto, json, text, not "pretty"');
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

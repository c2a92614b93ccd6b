// One process owns a home: a second server, command or embedder on it refuses to start, naming
// the first; the lock goes with a clean close, and is taken over from a process that is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from './helpers.ts';
import { cli } from './cli-process.ts';
import { createEngine } from '../src/index.ts';


test('a second server or embedder on a home in use refuses to start, naming the first; the lock goes with a clean close', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-lock-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const first = await startTestServer('uws', { home });
  const lock = JSON.parse(await readFile(join(home, 'data', 'troupe.lock'), 'utf8'));
  assert.equal(lock.pid, process.pid);
  await assert.rejects(startTestServer('uws', { home }), new RegExp(`in use by troupe process ${process.pid} on `));
  await assert.rejects(createEngine({ home }), /in use by troupe process/);
  // The refused starts changed nothing: the first server still answers.
  assert.equal((await first.call('GET', '/health')).status, 200);

  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', '--home', home, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk) => { output += chunk; });
  const code = await new Promise((resolvePromise) => child.once('exit', resolvePromise));
  assert.equal(code, 1);
  assert.match(output, new RegExp(`^troupe: the home whose data is .* is in use by troupe process ${process.pid} on .*: stop it, or give this one another --home\\n$`));

  await first.troupe.close();
  assert.equal(existsSync(join(home, 'data', 'troupe.lock')), false, 'a clean close releases the lock');
  const second = await startTestServer('uws', { home });
  assert.equal((await second.call('GET', '/health')).status, 200);
  await second.troupe.close();
});

test('the lock of a process that is gone is taken over, whatever it holds', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-lock-stale-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const gone = spawnSync('sh', ['-c', 'echo $$']);
  const deadPid = Number(String(gone.stdout).trim());
  const cases = [
    JSON.stringify({ pid: deadPid, startTime: 1, host: hostname(), startedAt: '2026-01-01T00:00:00Z' }),
    // The pid runs, but it is not the process that wrote the lock (a pid reused since).
    JSON.stringify({ pid: process.ppid, startTime: 1, host: hostname(), startedAt: '2026-01-01T00:00:00Z' }),
    // Half-written: its writer died between creating and writing it.
    '',
    'not json',
  ];
  await mkdir(join(home, 'data'), { recursive: true });
  for (const content of cases) {
    await writeFile(join(home, 'data', 'troupe.lock'), content);
    const taken = await startTestServer('uws', { home });
    assert.equal(JSON.parse(readFileSync(join(home, 'data', 'troupe.lock'), 'utf8')).pid, process.pid, content);
    await taken.troupe.close();
  }
});

// Contract of the shell executor through the real pool, in both ways of starting steps (posix_spawn
// in the worker, child_process in the step host): exit code, output capture, large output, stop of
// a process group with a background grandchild, and what happens when the step host dies.
import { test as testIn, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { StepTask } from '../core/index.ts';
import { PiscinaDispatcher } from './pool.ts';
import type { SpawnMode } from './protocol.ts';
import { nativeSpawner } from './shell/spawner.ts';

async function taskIn(dir: string, overrides: Partial<StepTask>): Promise<StepTask> {
  return {
    executor: { type: 'shell', config: {} }, command: 'true', scriptPath: join(dir, 's.script'),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, workingDir: dir,
    stdoutPath: join(dir, 's.out'), stderrPath: join(dir, 's.err'),
    captureOutput: false, maxOutputSize: 1024 * 1024, secrets: [], ...overrides,
  };
}

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-exec-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function processesNamed(marker: string): number {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.startsWith(marker)).length;
}

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

const modes: SpawnMode[] = ['posix_spawn', 'child_process'];

for (const mode of modes) {
  const missing = mode === 'posix_spawn' && !nativeSpawner;
  const pool = missing ? undefined! : new PiscinaDispatcher({ maxThreads: 2, spawnMode: mode });
  if (!missing) testIn.after(() => pool.close());
  // In CI the addon must be there (spawner.test.ts fails without it); elsewhere its tests are skipped.
  const test = (name: string, fn: (t: TestContext) => Promise<void>) => testIn(`${mode}: ${name}`, { skip: missing && 'addon not built here' }, fn);

  test('exit codes and stdout/stderr reach the result and the log files', async (t) => {
    const dir = await tempDir(t);
    const result = await pool.dispatch(await taskIn(dir, { command: 'echo out; echo err >&2; exit 3' })).result;
    // The failure's error ends with what it wrote to stderr, as Dagu's does.
    assert.deepEqual(result, { kind: 'ok', exitCode: 3, error: 'exit status 3\nrecent stderr (tail):\nerr\n' });
    assert.equal(await readFile(join(dir, 's.out'), 'utf8'), 'out\n');
    assert.equal(await readFile(join(dir, 's.err'), 'utf8'), 'err\n');
  });

  test('a step that prints nothing has an empty stdout log, as Dagu\'s, and no stderr log', async (t) => {
    const dir = await tempDir(t);
    const result = await pool.dispatch(await taskIn(dir, { command: 'true' })).result;
    assert.deepEqual(result, { kind: 'ok', exitCode: 0 });
    assert.equal(readFileSync(join(dir, 's.out'), 'utf8'), '');
    assert.equal(existsSync(join(dir, 's.err')), false);
  });

  test('a step ends with its shell even when a background child holds its output, which still reaches the log', async (t) => {
    const dir = await tempDir(t);
    const result = await pool.dispatch(await taskIn(dir, { command: '(sleep 1; echo late) & echo early' })).result;
    assert.deepEqual(result, { kind: 'ok', exitCode: 0 });
    assert.equal(readFileSync(join(dir, 's.out'), 'utf8'), 'early\n');
    await waitFor(() => readFileSync(join(dir, 's.out'), 'utf8').includes('late'));
    assert.equal(readFileSync(join(dir, 's.out'), 'utf8'), 'early\nlate\n');
  });

  test('captured output is trimmed and secrets are masked in it and in the log', async (t) => {
    const dir = await tempDir(t);
    const result = await pool.dispatch(await taskIn(dir, { command: 'printf "  token=hunter2 \\n"', captureOutput: true, secrets: ['hunter2'] })).result;
    assert.deepEqual(result, { kind: 'ok', exitCode: 0, output: 'token=*******' });
    assert.equal(await readFile(join(dir, 's.out'), 'utf8'), '  token=******* \n');
  });

  test('output over maxOutputSize fails the step', async (t) => {
    const dir = await tempDir(t);
    const result = await pool.dispatch(await taskIn(dir, { command: 'head -c 5000 /dev/zero', captureOutput: true, maxOutputSize: 1000 })).result;
    assert.equal(result.kind === 'ok' && result.error, 'output exceeded maxOutputSize (1000 bytes)');
  });

  test('a multi-line script honours its shebang and the working directory', async (t) => {
    const dir = await tempDir(t);
    const result = await pool.dispatch(await taskIn(dir, { command: undefined, script: '#!/bin/sh\npwd\necho "$0" | grep -c script\n' })).result;
    assert.equal(result.kind === 'ok' && result.exitCode, 0);
    assert.equal(await readFile(join(dir, 's.out'), 'utf8'), `${dir}\n1\n`);
  });

  test('a missing working directory is made, as Dagu makes it; one that cannot be is an error result naming it, not a crash', async (t) => {
    const dir = await tempDir(t);
    const made = await pool.dispatch(await taskIn(dir, { command: 'pwd', workingDir: join(dir, 'new', 'deep') })).result;
    assert.equal(made.kind === 'ok' && made.exitCode, 0);
    assert.equal(await readFile(join(dir, 's.out'), 'utf8'), `${join(dir, 'new', 'deep')}\n`);
    await writeFile(join(dir, 'a-file'), '');
    const blocked = await pool.dispatch(await taskIn(dir, { workingDir: join(dir, 'a-file', 'nope') })).result;
    assert.equal(blocked.kind, 'error');
    assert.match(blocked.kind === 'error' ? blocked.message : '', /working directory .*a-file\/nope/);
  });

  test('stop signals the whole process group, background grandchildren included', async (t) => {
    const dir = await tempDir(t);
    const marker = `troupe-grandchild-${process.pid}-${Date.now()}`;
    const handle = pool.dispatch(await taskIn(dir, { command: `bash -c 'exec -a ${marker} sleep 30' & sleep 30` }));
    await waitFor(() => processesNamed(marker) > 0);
    assert.equal(processesNamed(marker), 1, 'the grandchild is running');
    handle.stop('SIGTERM', 2000);
    const result = await handle.result;
    assert.equal(result.kind === 'ok' && result.signal, 'SIGTERM');
    await waitFor(() => processesNamed(marker) === 0);
    assert.equal(processesNamed(marker), 0);
  });

  test('a step that ignores the stop signal is killed after the cleanup time', async (t) => {
    const dir = await tempDir(t);
    const handle = pool.dispatch(await taskIn(dir, { command: "trap '' TERM; sleep 30" }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    handle.stop('SIGTERM', 300);
    const result = await handle.result;
    assert.equal(result.kind === 'ok' && result.signal, 'SIGKILL');
  });

  test('a stop that comes while the step is starting is not lost', async (t) => {
    const dir = await tempDir(t);
    const marker = `sleep 30.${process.pid}${Date.now() % 100_000}`;
    // Steps already running on the threads: the next processes start on libuv's pool (spawner.ts),
    // so the stop can arrive before there is a process group to signal.
    const holders = await Promise.all(Array.from({ length: 4 }, async () => pool.dispatch(await taskIn(dir, { command: 'sleep 30' }))));
    const tasks = await Promise.all(Array.from({ length: 12 }, () => taskIn(dir, { command: `exec ${marker}` })));
    const handles = tasks.map((task) => pool.dispatch(task));
    for (const handle of handles) handle.stop('SIGTERM', 2000);
    for (const result of await Promise.all(handles.map((handle) => handle.result))) {
      const stopped = result.kind === 'error' ? result.code === 'stopped' : result.kind === 'ok' && result.signal === 'SIGTERM';
      assert.ok(stopped, `stopped before it started or by the signal: ${JSON.stringify(result)}`);
    }
    await waitFor(() => processesNamed(marker) === 0);
    assert.equal(processesNamed(marker), 0);
    for (const holder of holders) holder.stop('SIGKILL', 0);
    for (const result of await Promise.all(holders.map((holder) => holder.result))) assert.equal(result.kind === 'ok' && result.signal, 'SIGKILL');
  });

  const killStepHosts = () => {
    const hosts = execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' }).split('\n')
      .filter((line) => line.includes('step-host') && line.trim().split(/\s+/)[1] === String(process.pid));
    assert.ok(hosts.length >= 1, 'a step host runs as a child of this process');
    for (const line of hosts) process.kill(Number(line.trim().split(/\s+/)[0]), 'SIGKILL');
  };

  if (mode === 'child_process') {
    test('a step host that dies fails its steps, leaves no process behind, and is replaced', async (t) => {
      const dir = await tempDir(t);
      const marker = `troupe-host-orphan-${process.pid}-${Date.now()}`;
      const handle = pool.dispatch(await taskIn(dir, { command: `bash -c 'exec -a ${marker} sleep 30' & sleep 30` }));
      await waitFor(() => processesNamed(marker) > 0);
      assert.equal(processesNamed(marker), 1);
      killStepHosts();
      const result = await handle.result;
      assert.equal(result.kind === 'error' && result.code, 'host_exited');
      await waitFor(() => processesNamed(marker) === 0);
      assert.equal(processesNamed(marker), 0);
      const next = await pool.dispatch(await taskIn(dir, { command: 'echo again' })).result;
      assert.deepEqual(next, { kind: 'ok', exitCode: 0 });
    });
  } else {
    test('a step host that dies does not disturb the steps its worker started; they finish normally', async (t) => {
      const dir = await tempDir(t);
      const handle = pool.dispatch(await taskIn(dir, { command: 'sleep 0.5; echo finished' }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      killStepHosts();
      assert.deepEqual(await handle.result, { kind: 'ok', exitCode: 0 });
      assert.equal(await readFile(join(dir, 's.out'), 'utf8'), 'finished\n');
    });
  }
}

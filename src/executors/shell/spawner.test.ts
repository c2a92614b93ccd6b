// The two ways a step's process starts must behave alike: posix_spawn (the addon) and child_process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeSpawner, nativeSpawns, nodeSpawner, spawnMethod, type OutputStream, type Spawner, type StepProcess } from './spawner.ts';

const PATH = process.env.PATH ?? '/usr/bin:/bin';

test('the posix_spawn addon is built and used (required in CI)', { skip: !process.env.CI && !nativeSpawner && 'addon not built here' }, () => {
  assert.ok(nativeSpawner, 'build/Release/troupe_spawn.node loads');
  assert.equal(spawnMethod, process.env.TROUPE_SPAWN === 'child_process' ? 'child_process' : 'posix_spawn');
});

function text(stream: OutputStream): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    stream.on('data', (chunk) => (data += chunk));
    stream.once('close', () => resolve(data));
  });
}

/** `beside`: the tests run while another process of the same spawner runs. */
const spawners: Array<[string, Spawner | undefined, boolean]> = [
  ['posix_spawn', nativeSpawner, false],
  // A thread that holds a running process starts the next ones on libuv's pool (spawnAsync).
  ['posix_spawn beside a running process', nativeSpawner, true],
  ['child_process', nodeSpawner, false],
];

for (const [name, spawner, beside] of spawners) describe(name, () => {
  const options = { skip: spawner === undefined && !process.env.CI && 'addon not built here' };
  const start = spawner!;

  if (spawner === nativeSpawner && spawner !== undefined) {
    let sibling: StepProcess | undefined;
    const before_ = { ...nativeSpawns };
    before(async () => {
      if (beside) sibling = await spawner(['sleep', '60'], { cwd: '/', env: { PATH } });
      Object.assign(before_, nativeSpawns);
    });
    after(async () => {
      if (sibling) {
        process.kill(-sibling.pid, 'SIGKILL');
        assert.deepEqual(await sibling.exited, { code: null, signal: 'SIGKILL' });
      }
      // Every test below starts at least one process the way this block names.
      const started = { inline: nativeSpawns.inline - before_.inline, onPool: nativeSpawns.onPool - before_.onPool };
      if (beside) assert.ok(started.onPool >= 5 && started.inline === 0, JSON.stringify(started));
      else assert.ok(started.inline >= 5 && started.onPool === 0, JSON.stringify(started));
    });
  }

  test(`${name}: exit code, stdout and stderr on pipes, stdin empty, working directory and environment`, options, async () => {
    const child = await start(['sh', '-c', 'cat; pwd; echo "$GREETING"; echo oops >&2; exit 3'], { cwd: '/', env: { PATH, GREETING: 'hello' } });
    const [stdout, stderr, exit] = await Promise.all([text(child.stdout), text(child.stderr), child.exited]);
    assert.deepEqual(exit, { code: 3, signal: null });
    assert.equal(stdout, '/\nhello\n');
    assert.equal(stderr, 'oops\n');
  });

  test(`${name}: the process leads its own group and inherits no descriptor but 0, 1 and 2`, options, async () => {
    // No pipeline in the shell: while it sets one up it holds the pipe's descriptors itself.
    const child = await start(['sh', '-c', 'ps -o pgid= -p $$; ls /proc/$$/fd'], { cwd: '/', env: { PATH } });
    const stdout = await text(child.stdout);
    await child.exited;
    const [pgid, ...fds] = stdout.trim().split('\n');
    assert.equal(Number(pgid), child.pid);
    if (name === 'posix_spawn') assert.deepEqual(fds, ['0', '1', '2']);
  });

  test(`${name}: output larger than a pipe's buffer arrives whole and in order`, options, async () => {
    const child = await start(['sh', '-c', 'seq 1 200000'], { cwd: '/', env: { PATH } });
    const [stdout, exit] = await Promise.all([text(child.stdout), child.exited]);
    assert.deepEqual(exit, { code: 0, signal: null });
    const lines = stdout.split('\n');
    assert.equal(lines.length, 200001);
    assert.equal(lines[0], '1');
    assert.equal(lines[199999], '200000');
    assert.ok(lines.slice(0, -1).every((line, index) => line === String(index + 1)));
  });

  test(`${name}: a signal ends it with the signal's name`, options, async () => {
    const child = await start(['sh', '-c', 'kill -TERM $$'], { cwd: '/', env: { PATH } });
    assert.deepEqual(await child.exited, { code: null, signal: 'SIGTERM' });
  });

  test(`${name}: commands are looked up on the step's PATH; a missing command or directory rejects`, options, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-spawn-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'only-here'), '#!/bin/sh\necho found\n');
    await chmod(join(dir, 'only-here'), 0o755);
    const child = await start(['only-here'], { cwd: '/', env: { PATH: `${dir}:${PATH}` } });
    assert.equal(await text(child.stdout), 'found\n');
    assert.deepEqual(await child.exited, { code: 0, signal: null });
    await assert.rejects(start(['only-here'], { cwd: '/', env: { PATH } }), { code: 'ENOENT' });
    await assert.rejects(start(['sh', '-c', 'true'], { cwd: join(dir, 'missing'), env: { PATH } }), { code: 'ENOENT' });
  });
});

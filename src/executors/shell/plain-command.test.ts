// Which command lines are started without the shell: only those the shell would just split and run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainCommand, withShellPwd } from './plain-command.ts';

test('words of plain characters are a plain command, split on blanks', () => {
  assert.deepEqual(plainCommand('sleep 0.2'), ['sleep', '0.2']);
  assert.deepEqual(plainCommand('  python3\tjob.py --day=2026-11-28 -v  '), ['python3', 'job.py', '--day=2026-11-28', '-v']);
  assert.deepEqual(plainCommand('/usr/bin/env'), ['/usr/bin/env']);
  assert.deepEqual(plainCommand('curl -fsS http://host:8080/a/b,c+d@e%20'), ['curl', '-fsS', 'http://host:8080/a/b,c+d@e%20']);
});

test('anything the shell would interpret, and its own words, go through the shell', () => {
  for (const command of [
    '', '   ', 'echo hi', 'true', 'false', 'cd /tmp', 'exit 1', 'test -f x', '[ -f x ]', 'kill 1', 'printf x', ': nothing',
    '. ./env.sh', 'if', 'while', '{', '!', 'FOO=1 env', 'sleep $DELAY', 'ls *.txt', 'ls file?', 'ls [ab]', 'cat ~/x',
    'echo "q"', "echo 'q'", 'a\\ b', 'a;b', 'a && b', 'a | b', 'a > f', 'a < f', 'a & b', 'a #comment', '(a)', 'a `b`',
    'sleep 1\nsleep 2', 'sleep\r1', 'a b=c{d}', 'a !b', 'time sleep 1', 'source x', 'let x', 'declare x',
  ]) assert.equal(plainCommand(command), undefined, JSON.stringify(command));
});

test('PWD is what dash exports: an inherited one naming the directory is kept, else the physical path', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plain-pwd-'));
  try {
    const link = join(dir, 'link');
    await symlink(dir, link);
    assert.equal(withShellPwd({ PWD: link }, link).PWD, link);
    assert.equal(withShellPwd({ PWD: `${dir}/` }, link).PWD, `${dir}/`);
    assert.equal(withShellPwd({ PWD: '/' }, link).PWD, realpathSync(dir));
    assert.equal(withShellPwd({ PATH: '/bin' }, link).PWD, realpathSync(dir));
    assert.equal(withShellPwd({ PWD: 'relative' }, link).PWD, realpathSync(dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { remoteProgram, stopLine } from './remote-program.ts';

/**
 * Runs the program as sshd would: sh reading it on a stdin that stays open, in a process group of
 * its own (the watcher signals the group). Its stdout and exit status.
 */
async function runLocally(stdin: string): Promise<{ stdout: string; status: number | null }> {
  const child = spawn('sh', [], { detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stdin.write(stdin);
  const status = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.stdin.destroy();
  return { stdout, status };
}

test('the env is exported, quoted; the server\'s own variables stay local unless the DAG changed them; names a shell cannot export are left out', () => {
  const program = remoteProgram(
    { command: 'printenv A B PATH HOME', env: { A: "it's $x", B: 'two\nlines', PATH: '/dag/bin', HOME: '/local/home', 'NOT-A-NAME': 'v' } },
    { PATH: '/usr/bin', HOME: '/local/home' },
  );
  assert.equal(program.command, "exec 'sh'");
  assert.match(program.stdin, /export A='it'\\''s \$x'\n/);
  assert.match(program.stdin, /export PATH='\/dag\/bin'\n/);
  assert.doesNotMatch(program.stdin, /export HOME|NOT-A-NAME/);
});

test('command, commands and scripts run as a local shell would run them; the step reads /dev/null', async () => {
  const stdout = async (task: Parameters<typeof remoteProgram>[0]) => (await runLocally(remoteProgram(task, {}).stdin)).stdout;
  assert.equal(await stdout({ command: 'echo "$X"; cat; echo done', env: { X: 'x' } }), 'x\ndone\n');
  assert.equal(await stdout({ commands: ['echo one', 'false', 'echo never'], env: {} }), 'one\n');
  assert.equal(await stdout({ script: 'for n in 1 2; do\n  echo "n=$n"\ndone\n', env: {} }), 'n=1\nn=2\n');
  assert.equal(await stdout({ script: '#!/bin/sh\necho "$0"', env: {} }), '/bin/sh\n');
  assert.equal((await stdout({ command: 'wc -l', script: 'a\nb\nc', env: {} })).trim(), '3');
  assert.equal(await stdout({ env: {} }), '');
});

test('an exit in the step ends the step with its code', async () => {
  assert.deepEqual(await runLocally(remoteProgram({ command: 'echo before; exit 7; echo after', env: {} }, {}).stdin), { stdout: 'before\n', status: 7 });
});

test('a stop line names a signal without its SIG prefix; a name that is not a signal\'s gives none', () => {
  assert.equal(stopLine('SIGTERM'), 'TERM\n');
  assert.equal(stopLine('int'), 'INT\n');
  assert.equal(stopLine('TERM; rm -rf /'), undefined);
});

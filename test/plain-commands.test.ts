// A plain command line (`sleep 0.2`, `cat /proc/self/status`) runs without a shell in between, and
// nothing a step can see changes: its environment's PWD, the shell's answer for a program that is
// not there, a script without `#!`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let dir: string;

before(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'plain-commands-'));
  await symlink(dir, join(dir, 'here'));
  await writeFile(join(dir, 'no-shebang'), 'echo "from a script: $0"\n');
  await chmod(join(dir, 'no-shebang'), 0o755);
});

after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

test('a plain command is the step\'s process itself, and sees the PWD the shell would have given it', async () => {
  await server.writeDag('plain', [
    `workingDir: ${join(dir, 'here')}`,
    'type: graph',
    'steps:',
    '  - name: status',
    '    command: cat /proc/self/status',
    '  - name: pwd',
    '    command: printenv PWD',
    '  - name: script',
    `    command: ${join(dir, 'no-shebang')}`,
    '',
  ].join('\n'));
  const run = await server.startAndWait('plain');
  assert.equal(run.statusLabel, 'succeeded');
  // Its parent is the server (or the step host): no `sh` waits in between.
  const parent = /^PPid:\s+(\d+)$/m.exec(await server.stepLog('plain', run.dagRunId, 'status'))?.[1];
  assert.ok(parent, 'the status lists the parent');
  assert.notEqual(readFileSync(`/proc/${parent}/comm`, 'utf8').trim(), 'sh');
  assert.equal((await server.stepLog('plain', run.dagRunId, 'pwd')).trim(), realpathSync(dir));
  // Not a program: the shell runs it as a script, as before.
  assert.equal((await server.stepLog('plain', run.dagRunId, 'script')).trim(), `from a script: ${join(dir, 'no-shebang')}`);
});

test('a program that is not there fails as the shell reports it: exit status 127 and its message', async () => {
  await server.writeDag('missing', 'steps:\n  - name: nothing\n    command: no-such-program-of-troupe --flag\n');
  const run = await server.startAndWait('missing');
  assert.equal(run.statusLabel, 'failed');
  const node = run.nodes[0];
  assert.match(node.error, /exit status 127/);
  assert.match(await readFile(node.stderr, 'utf8'), /no-such-program-of-troupe: not found/);
});

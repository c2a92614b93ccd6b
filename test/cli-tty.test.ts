// The live view of `troupe start` on a terminal: a pseudo-terminal made by `script` (util-linux),
// the view redrawn in place as steps start and end, then the summary; the exit code passes through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cli } from './cli-process.ts';
import { startTestServer } from './helpers.ts';
import { FAILS, PASSES, makeHome } from './cli-run.ts';

/** Runs `troupe <args>` on a pseudo-terminal; resolves with what the terminal received and the exit code. */
function onTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, '--import', 'tsx', cli, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  // -e: script exits with the command's code; -q: nothing of its own; /dev/null: no typescript file.
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (chunk) => { screen += chunk; });
  child.stderr.on('data', (chunk) => { screen += chunk; });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, screen })));
}

test('on a terminal, start shows a live view redrawn in place, then the summary; a failed run exits 1', async (t) => {
  const home = await makeHome({ fails: FAILS.replace('echo hello ${NAME}', 'sleep 1') });
  t.after(() => home.remove());
  const { code, screen } = await onTerminal(['start', 'fails', '-r', 'tty1', ...home.flag]);
  assert.equal(code, 1, screen);
  // The view is drawn, then drawn again over itself (cursor up, clear to the end of the screen).
  assert.match(screen, /^fails tty1 {2}running/);
  assert.match(screen, /\x1b\[3A\r\x1b\[J/);
  assert.match(screen, /▶ greet +running/);
  assert.match(screen, /✔ greet +succeeded/);
  assert.match(screen, /✘ break +failed +\S+ +exit status 3/);
  // No plain transition lines on a terminal: the view alone, then the summary after it.
  assert.doesNotMatch(screen, /\d\d:\d\d:\d\d step /);
  assert.match(screen, /dag-run fails tty1: failed in \S+\r\n {2}failed step break: exit status 3\r\n/);
});

test('on a terminal, over HTTP to the home\'s server, the live view shows the polled steps and a successful run exits 0', async (t) => {
  const home = await makeHome({ passes: PASSES });
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  const { code, screen } = await onTerminal(['start', 'passes', '-r', 'tty2', ...home.flag]);
  assert.equal(code, 0, screen);
  assert.match(screen, /^passes tty2 {2}/);
  assert.match(screen, /✔ first +succeeded/);
  assert.match(screen, /✔ second +succeeded/);
  assert.match(screen, /dag-run passes tty2: succeeded in \S+\r\n/);
  assert.equal((await server.call('GET', '/dag-runs/passes/tty2')).body.dagRun.status, 4);
});

// The live view of `troupe start` on a terminal: a pseudo-terminal made by `script` (util-linux),
// the view redrawn in place as steps start and end, then the summary; the exit code passes through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cli } from './cli-process.ts';
import { startTestServer, waitUntil } from './helpers.ts';
import { FAILS, PASSES, WAITS, makeHome } from './cli-run.ts';

interface Terminal {
  /** What the terminal received so far. */
  screen(): string;
  /** Keys typed on the terminal: its line discipline turns Ctrl-C (\x03) into SIGINT for the command. */
  type(keys: string): void;
  /** Resolves with the exit code once the command has ended. */
  outcome: Promise<{ code: number | null; screen: string }>;
}

/** Starts `troupe <args>` on a pseudo-terminal. */
function terminal(args: string[]): Terminal {
  const words = [process.execPath, '--import', 'tsx', cli, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`);
  // -e: script exits with the command's code; -q: nothing of its own; /dev/null: no typescript file.
  // What is written to script's stdin is typed on the terminal.
  // script runs the command through $SHELL -c. `exec` leaves no shell between the terminal and
  // troupe: dash, waiting on a command when Ctrl-C comes, exits by SIGINT itself (130) whatever
  // the command's own code; bash would exec the command by itself. SHELL is set for the same
  // shell everywhere (CI's environment may have none).
  const command = `exec ${words.join(' ')}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, TERM: 'xterm', SHELL: '/bin/sh' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (chunk) => { screen += chunk; });
  child.stderr.on('data', (chunk) => { screen += chunk; });
  const outcome = new Promise<{ code: number | null; screen: string }>((resolve) => child.once('close', (code) => resolve({ code, screen })));
  return { screen: () => screen, type: (keys) => child.stdin.write(keys), outcome };
}

/** Runs `troupe <args>` on a pseudo-terminal to its end; nothing is typed. */
function onTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const session = terminal(args);
  return session.outcome;
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
  assert.match(screen, /✘ break +failed +\S+ +failed to execute step "break": exit status 3/);
  // No plain transition lines on a terminal: the view alone, then the summary after it.
  assert.doesNotMatch(screen, /\d\d:\d\d:\d\d step /);
  assert.match(screen, /dag-run fails tty1: failed in \S+\r\n {2}failed step break: failed to execute step "break": exit status 3\r\n/);
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

test('on a terminal, Ctrl-C stops the followed run: the live view, the notice, the summary, exit 1, the run recorded aborted', async (t) => {
  const home = await makeHome({ waits: WAITS });
  const session = terminal(['start', 'waits', '-r', 'tty3', ...home.flag]);
  assert.ok(await waitUntil(() => /▶ wait +running/.test(session.screen()), 20_000), session.screen());
  session.type('\x03');
  const { code, screen } = await session.outcome;
  assert.equal(code, 1, screen);
  assert.match(screen, /^waits tty3 {2}running/);
  // The notice on a line of its own below the view, the view drawn again below it, then the summary.
  assert.match(screen, /▶ wait +running[^]*\r\nCtrl-C: stopping dag-run waits tty3 \(Ctrl-C again to leave without waiting for its end\)\r\n/);
  assert.match(screen, /Ctrl-C: stopping[^]*■ wait +aborted/);
  assert.match(screen, /dag-run waits tty3: aborted in \S+ \(stopped by Ctrl-C\)\r\n/);
  // The command held the home: now a server opens it and serves the run as the command recorded it.
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  const run = (await server.call('GET', '/dag-runs/waits/tty3')).body.dagRun;
  assert.equal(run.statusLabel, 'aborted');
  assert.equal(run.nodes[0].statusLabel, 'aborted');
});

test('on a terminal, over HTTP to the home\'s server, Ctrl-C stops the run through the API: notice, exit 1, recorded aborted', async (t) => {
  const home = await makeHome({ waits: WAITS });
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  const session = terminal(['start', 'waits', '-r', 'tty4', ...home.flag]);
  assert.ok(await waitUntil(() => /▶ wait +running/.test(session.screen()), 20_000), session.screen());
  session.type('\x03');
  const { code, screen } = await session.outcome;
  assert.equal(code, 1, screen);
  assert.match(screen, /\r\nCtrl-C: stopping dag-run waits tty4 \(Ctrl-C again to leave without waiting for its end\)\r\n/);
  assert.match(screen, /dag-run waits tty4: aborted in \S+ \(stopped by Ctrl-C\)\r\n/);
  const run = (await server.call('GET', '/dag-runs/waits/tty4')).body.dagRun;
  assert.equal(run.statusLabel, 'aborted');
  assert.equal(run.nodes[0].statusLabel, 'aborted');
});

test('on a terminal, exec writes the command\'s output above the live view, which is drawn again below it', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  const { code, screen } = await onTerminal(['exec', '-N', 'shown', '-r', 'tty5', ...home.flag, '--', 'sh', '-c', 'sleep 1; echo one; sleep 1; echo two; sleep 1']);
  assert.equal(code, 0, screen);
  // The view (two lines) is cleared, the output written where it was, and the view drawn after it.
  assert.match(screen, /\x1b\[2A\r\x1b\[Jone\r\nshown tty5 {2}running[^\n]*\r\n {2}▶ run +running[^]*\x1b\[2A\r\x1b\[Jtwo\r\nshown tty5 {2}running/);
  assert.match(screen, /✔ run +succeeded[^]*dag-run shown tty5: succeeded in \S+\r\n/);
});

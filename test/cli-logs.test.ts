// Step output on the command line: `start` and `retry` print what each step writes as it writes
// it, and `troupe logs` prints a run's step logs, or follows them until the run ends; embedded
// (read from the files) and through a server (its log stream route).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, waitUntil } from './helpers.ts';
import { makeHome, troupe, troupeChild } from './cli-run.ts';

/** Two steps that write; the second to stdout, stderr, and a last line without a line break. */
const TALKS = 'steps:\n  - name: first\n    command: echo one\n  - name: second\n    command: sh -c "echo two; echo oops >&2; printf three"\n    depends: first\n';
/** A step that writes, then fails. */
const BREAKS = 'steps:\n  - name: greet\n    command: echo hello\n  - name: break\n    command: sh -c "echo breaking; exit 3"\n    depends: greet\n';

/** Writes line1, waits (20 s at most) for GO in `dir`, then writes line2 and line3. */
function waiting(dir: string): string {
  return ['steps:', '  - name: talk', '    script: |', '      echo line1',
    `      i=0; while [ ! -f '${join(dir, 'GO')}' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 7; sleep 0.05; done`,
    '      echo line2; echo line3'].join('\n');
}

const stepLines = (stdout: string) => stdout.split('\n').filter((line) => / \| /.test(line) || /^\d\d:\d\d:\d\d step /.test(line))
  .map((line) => line.replace(/^\d\d:\d\d:\d\d step (\S+) (\S+).*$/, '[$1 $2]'));

test('embedded: start prints each step\'s lines between its start and its end; logs prints them again, one step, stderr, JSON', async (t) => {
  const home = await makeHome({ talks: TALKS, breaks: BREAKS });
  t.after(() => home.remove());
  const started = await troupe(['start', 'talks', '-r', 'talk-1', ...home.flag]);
  assert.equal(started.code, 0, started.stderr);
  assert.deepEqual(stepLines(started.stdout), ['[first running]', 'first | one', '[first succeeded]', '[second running]', 'second | two', 'second | three', '[second succeeded]']);
  assert.equal(started.stderr, 'second | oops\n');

  const all = await troupe(['logs', 'talks', ...home.flag]);
  assert.equal(all.code, 0, all.stderr);
  assert.equal(all.stdout, 'first | one\nsecond | two\nsecond | three\n');
  assert.equal((await troupe(['logs', 'talks', 'talk-1', '--step', 'second', ...home.flag])).stdout, 'two\nthree\n');
  assert.equal((await troupe(['logs', 'talks', '--stderr', ...home.flag])).stdout, 'second | oops\n');
  const json = await troupe(['logs', 'talks', '--step', 'first', '--json', ...home.flag]);
  assert.deepEqual(JSON.parse(json.stdout), { type: 'output', name: 'talks', dagRunId: 'talk-1', step: 'first', stream: 'stdout', content: 'one' });
  const unknown = await troupe(['logs', 'talks', '--step', 'nope', ...home.flag]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /has no step nope: its steps: first, second/);

  // A retry of one step prints that step's output, not the kept step's again.
  assert.equal((await troupe(['start', 'breaks', '-r', 'b1', ...home.flag])).code, 1);
  const retried = await troupe(['retry', 'breaks', '-r', 'b1', '--step', 'break', ...home.flag]);
  assert.deepEqual(stepLines(retried.stdout), ['[break running]', 'break | breaking', '[break failed]']);
});

test('through a server: start prints the lines; logs --follow prints a running run\'s lines as they come and exits at its end', async (t) => {
  const home = await makeHome({ talks: TALKS });
  await home.writeDag('waits', waiting(home.dir));
  const server = await startTestServer('uws', { home: home.dir });
  t.after(async () => {
    await server.close();
    await home.remove();
  });
  const started = await troupe(['start', 'talks', ...home.flag]);
  assert.equal(started.code, 0, started.stderr);
  assert.deepEqual(stepLines(started.stdout), ['[first running]', 'first | one', '[first succeeded]', '[second running]', 'second | two', 'second | three', '[second succeeded]']);

  const run = await server.call('POST', '/dags/waits/start', {});
  const follower = troupeChild(['logs', 'waits', run.body.dagRunId, '--follow', ...home.flag]);
  // The step waits for GO after its first line: that line came while it ran.
  const seen = await waitUntil(() => follower.output().includes('talk | line1'), 20_000);
  await writeFile(join(home.dir, 'GO'), '');
  const { code, stdout, stderr } = await follower.outcome;
  assert.ok(seen, `the first line was printed while the step waited:\n${stdout}${stderr}`);
  assert.equal(code, 0, stderr);
  assert.equal(stdout, 'talk | line1\ntalk | line2\ntalk | line3\n');
  assert.equal((await server.waitForRun('waits', run.body.dagRunId)).statusLabel, 'succeeded');

  // status --follow: a run begun elsewhere, followed from the event stream, its output included.
  await rm(join(home.dir, 'GO'));
  const second = await server.call('POST', '/dags/waits/start', {});
  const watcher = troupeChild(['status', 'waits', '--follow', ...home.flag]);
  const watching = await waitUntil(() => watcher.output().includes('talk | line1'), 20_000);
  await writeFile(join(home.dir, 'GO'), '');
  const watched = await watcher.outcome;
  assert.ok(watching, `the first line was printed while the step waited:\n${watched.stdout}${watched.stderr}`);
  assert.equal(watched.code, 0, watched.stderr);
  assert.deepEqual(stepLines(watched.stdout), ['[talk running]', 'talk | line1', 'talk | line2', 'talk | line3', '[talk succeeded]']);
  assert.match(watched.stdout, new RegExp(`dag-run waits ${second.body.dagRunId}: succeeded`));
  const nothing = await troupe(['status', '--follow', ...home.flag]);
  assert.equal(nothing.code, 1);
  assert.match(nothing.stderr, /--follow needs the DAG whose run it follows/);
});

// `troupe exec` shows what the command writes while it runs, embedded and through a server: the
// command below writes a line, then waits for the test to have read that line from troupe's
// output before it goes on. Shown only at the end, the line would never be read, and the command
// would give up (exit 7) after its wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, waitUntil } from './helpers.ts';
import { makeHome, troupeChild, type Home } from './cli-run.ts';

/** Writes `first`, waits (60 s at most: a loaded machine starts troupe slowly) for the file GO in the home, then writes the rest. */
function waiting(home: Home): string[] {
  const go = join(home.dir, 'GO');
  return ['sh', '-c', `echo first; echo "on stderr" >&2; i=0; while [ ! -f '${go}' ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 7; sleep 0.05; done; printf 'no newline yet'; sleep 1.5; echo ' then one'; echo last`];
}

async function execWhileReading(home: Home, extra: string[]): Promise<{ code: number | null; stdout: string; stderr: string; early: string }> {
  const { outcome, output } = troupeChild(['exec', '-N', 'streamed', ...home.flag, ...extra, '--', ...waiting(home)]);
  let early = '';
  const seen = await waitUntil(async () => {
    early = output();
    return early.includes('first') && early.includes('on stderr');
  }, 60_000);
  await writeFile(join(home.dir, 'GO'), '');
  const ended = await outcome;
  assert.ok(seen, `the first lines were shown while the command waited:\n${early}`);
  return { ...ended, early };
}

test('exec shows what the command writes as it writes it, between the step\'s start and its end; embedded', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  const { code, stdout, stderr } = await execWhileReading(home, []);
  assert.equal(code, 0, stdout + stderr);
  // A line still being written is shown once it has stopped changing; what follows is a line of its own.
  assert.match(stdout, /\d\d:\d\d:\d\d step run running\nfirst\nno newline yet\n then one\nlast\n\d\d:\d\d:\d\d step run succeeded \(\S+\)\ndag-run streamed \S+: succeeded in /);
  assert.equal(stderr, 'on stderr\n');
});

test('exec through the home\'s server shows the output as it is written too, and --json gives it as output objects', async (t) => {
  const home = await makeHome();
  const server = await startTestServer('uws', { home: home.dir });
  t.after(async () => {
    await server.close();
    await home.remove();
  });
  const { code, stdout, stderr } = await execWhileReading(home, ['--json']);
  assert.equal(code, 0, stdout + stderr);
  assert.equal(stderr, '');
  const events = stdout.trim().split('\n').map((line) => JSON.parse(line));
  const types = events.map((event) => (event.type === 'output' ? `${event.stream}:${event.content}` : `${event.type}:${event.status ?? ''}`));
  // The step's start, its output (stdout and stderr, each in its order), its end, the summary.
  assert.deepEqual(types.slice(0, 2), ['run:running', 'step:running']);
  assert.deepEqual(types.slice(-2), ['step:succeeded', 'summary:succeeded']);
  const lines = types.slice(2, -2);
  assert.deepEqual(lines.filter((line) => line.startsWith('stderr:')), ['stderr:on stderr']);
  assert.deepEqual(lines.filter((line) => line.startsWith('stdout:')).join('\n').replace(/stdout:/g, '').split('\n'),
    ['first', 'no newline yet', ' then one', 'last']);
  const dagRunId = events[0].dagRunId;
  assert.equal(await server.stepLog('streamed', dagRunId, 'run'), 'first\nno newline yet then one\nlast');
});

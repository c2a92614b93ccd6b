// `troupe scheduler`: schedules and queues on the home without the API. A run queued by the
// command with no server on the home waits for it; other verbs cannot reach the home meanwhile
// and say what to run instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exited } from './cli-process.ts';
import { waitUntil } from './helpers.ts';
import { PASSES, makeHome, troupe, troupeChild } from './cli-run.ts';

test('a run queued with no server waits; troupe scheduler starts it, and verbs meanwhile name the way out', async (t) => {
  const home = await makeHome({ passes: PASSES });
  t.after(() => home.remove());
  assert.equal((await troupe(['enqueue', 'passes', '-r', 'q1', ...home.flag])).code, 0);

  const scheduler = troupeChild(['scheduler', ...home.flag]);
  t.after(() => { if (scheduler.child.exitCode === null) scheduler.child.kill('SIGKILL'); });
  assert.ok(await waitUntil(() => /"dagRunId":"q1".*"msg":"run ended"/.test(scheduler.output()), 30_000), scheduler.output());
  assert.match(scheduler.output(), /troupe scheduler running \(no API\); home /);

  const refused = await troupe(['status', 'passes', ...home.flag]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^troupe: the home .* is in use by troupe process \d+ on .*, which serves no API \(a `troupe scheduler`, or another command\): wait for it to end, run `troupe server` instead of `troupe scheduler`, or pass --server URL\n$/);

  scheduler.child.kill('SIGTERM');
  assert.equal(await exited(scheduler.child), 0);
  const status = JSON.parse((await troupe(['status', 'passes', '-r', 'q1', '--json', ...home.flag])).stdout);
  assert.equal(status.dagRun.statusLabel, 'succeeded');
});

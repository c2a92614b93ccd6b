// Verbs with no server on the home: the command runs the engine itself, under the home's lock,
// and leaves the same runs in the same store a server then serves (checked through its API).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from './helpers.ts';
import { FAILS, PASSES, makeHome, troupe } from './cli-run.ts';

function runIdOf(stdout: string): string {
  const match = /dag-run \S+ (\S+): /.exec(stdout);
  assert.ok(match, stdout);
  return match[1];
}

test('embedded start follows each step, sums up, exits 0 or 1; the runs are in the store a server serves', async (t) => {
  const home = await makeHome({ passes: PASSES, fails: FAILS });
  t.after(() => home.remove());
  const passed = await troupe(['start', 'passes', ...home.flag]);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(passed.stderr, '');
  const lines = passed.stdout.split('\n');
  const order = lines.map((line) => /^\d\d:\d\d:\d\d (?:step (\S+) (\S+)|dag-run \S+ \S+ (\S+))/.exec(line)).filter((match) => match !== null)
    .map((match) => (match[1] ? `${match[1]} ${match[2]}` : `run ${match[3]}`));
  assert.deepEqual(order, ['run running', 'first running', 'first succeeded', 'second running', 'second succeeded']);
  assert.match(passed.stdout, /\ndag-run passes \S+: succeeded in \S+\n  log: .*\.log\n  details: troupe status passes --run-id \S+\n$/);
  const passedId = runIdOf(passed.stdout.split('\n').slice(-5).join('\n'));

  const failed = await troupe(['start', 'fails', '-r', 'run-one', ...home.flag, '--', 'NAME=cli']);
  assert.equal(failed.code, 1);
  assert.match(failed.stdout, /step break failed \(\S+\): failed to execute step "break": exit status 3\n/);
  assert.match(failed.stdout, /\ndag-run fails run-one: failed in \S+\n  failed step break: failed to execute step "break": exit status 3\n/);

  const withFlag = await troupe(['start', 'fails', '-p', 'NAME=flag', '--run-id', 'run-two', '--json', ...home.flag]);
  assert.equal(withFlag.code, 1);
  const events = withFlag.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(events.filter((event) => event.type === 'step').map((event) => `${event.step} ${event.status}`), ['greet running', 'greet succeeded', 'break running', 'break failed']);
  const summary = events[events.length - 1];
  assert.equal(summary.type, 'summary');
  assert.equal(summary.status, 'failed');
  assert.deepEqual(summary.failedSteps, [{ name: 'break', error: 'failed to execute step "break": exit status 3' }]);

  // One after the other: each takes the home's lock while it runs.
  const embedded = [await troupe(['status', 'fails', '-r', 'run-one', '--json', ...home.flag]), await troupe(['status', '--json', ...home.flag])];

  // The lock is released: a server opens the home and serves what the command stored.
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  // The same verbs now go to the server, and print the same.
  const overHttp = await Promise.all([troupe(['status', 'fails', '-r', 'run-one', '--json', ...home.flag]), troupe(['status', '--json', ...home.flag])]);
  assert.deepEqual(overHttp.map((outcome) => JSON.parse(outcome.stdout)), embedded.map((outcome) => JSON.parse(outcome.stdout)));
  assert.equal(JSON.parse(embedded[1].stdout).dagRuns.length, 3);
  assert.equal((await server.call('GET', `/dag-runs/passes/${passedId}`)).body.dagRun.status, 4);
  const one = (await server.call('GET', '/dag-runs/fails/run-one')).body.dagRun;
  assert.equal(one.status, 2);
  assert.deepEqual(JSON.parse(one.params), { NAME: 'cli' });
  assert.equal(await server.stepLog('fails', 'run-one', 'greet'), 'hello cli');
  assert.deepEqual(JSON.parse((await server.call('GET', '/dag-runs/fails/run-two')).body.dagRun.params), { NAME: 'flag' });
});

test('embedded status, retry of one step, restart, a DAG given as a file path, exec, validate and dry', async (t) => {
  const home = await makeHome({ fails: FAILS, passes: PASSES });
  t.after(() => home.remove());
  assert.equal((await troupe(['start', 'fails', '-r', 'r1', ...home.flag])).code, 1);

  const status = await troupe(['status', 'fails', ...home.flag]);
  assert.equal(status.code, 0);
  assert.match(status.stdout, /^dag-run fails r1: failed\n/);
  assert.match(status.stdout, /\nSTEP +STATUS +STARTED +DURATION +ERROR\ngreet +succeeded +.*\nbreak +failed +.* failed to execute step "break": exit status 3\n$/);
  const json = JSON.parse((await troupe(['status', 'fails', '-r', 'r1', '--json', ...home.flag])).stdout);
  assert.equal(json.dagRun.statusLabel, 'failed');

  // The DAG is fixed, then its failed step alone runs again under the same run id.
  await home.writeDag('fails', FAILS.replace('exit 3', 'exit 0'));
  const retried = await troupe(['retry', 'fails', '-r', 'r1', '--step', 'break', ...home.flag]);
  assert.equal(retried.code, 1, 'the retry runs the stored definition of the run, which still fails');
  assert.doesNotMatch(retried.stdout, /step greet/, 'the kept step is not told again');
  assert.match(retried.stdout, /step break running\n.*step break failed/);

  const restarted = await troupe(['restart', 'passes', ...home.flag]);
  assert.equal(restarted.code, 1, 'nothing of passes ran yet');
  assert.match(restarted.stderr, /^troupe: no dag-runs found for DAG passes/);
  assert.equal((await troupe(['start', 'passes', '-r', 'p1', ...home.flag])).code, 0);
  const again = await troupe(['restart', 'passes', ...home.flag]);
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stdout, /dag-run passes p1:/);
  assert.match(again.stdout, /dag-run passes \S+: succeeded/);

  const file = join(home.dir, 'elsewhere.yaml');
  await writeFile(file, `name: from-file\n${PASSES}`);
  const fromFile = await troupe(['start', file, ...home.flag]);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.match(fromFile.stdout, /dag-run from-file \S+: succeeded/);

  const exec = await troupe(['exec', '-N', 'adhoc', '-r', 'x1', ...home.flag, '--', 'sh', '-c', 'echo "from exec"']);
  assert.equal(exec.code, 0, exec.stderr);
  // The command's output, between the step's start and its end, then the summary.
  assert.match(exec.stdout, /step run running\nfrom exec\n\S+ step run succeeded \(\S+\)\ndag-run adhoc x1: succeeded in \S+\n/);
  assert.equal(exec.stderr, '');

  assert.equal((await troupe(['validate', 'passes', ...home.flag])).code, 0);
  await home.writeDag('broken', 'steps:\n  - name: a\n    command: echo\n    depends: nothere\n');
  const invalid = await troupe(['validate', 'broken', ...home.flag]);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stdout, /broken\.yaml: 1 problem\n  .*nothere/);
  const dry = await troupe(['dry', 'fails', ...home.flag, '--', 'NAME=dry']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^dry run of DAG fails: nothing is executed\nparams: NAME=dry\n\nSTAGE +STEP +DEPENDS ON +RUNS\n1 +greet +- +echo hello \$\{NAME\}\n2 +break +greet +sh -c "exit 0"\n$/);

  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  const r1 = (await server.call('GET', '/dag-runs/fails/r1')).body.dagRun;
  assert.equal(r1.nodes.find((node: { step: { name: string } }) => node.step.name === 'break').status, 2);
  assert.equal(await server.stepLog('adhoc', 'x1', 'run'), 'from exec');
  assert.equal((await server.call('GET', '/dag-runs/dry')).body.dagRuns.length, 0, 'dry ran nothing');
  assert.equal((await server.call('GET', '/dag-runs/fails')).body.dagRuns.length, 1, 'dry and validate ran nothing');
});

test('embedded enqueue leaves the run queued for a server, dequeue takes it out; cleanup lists, then removes finished runs', async (t) => {
  const home = await makeHome({ passes: PASSES });
  t.after(() => home.remove());
  const queued = await troupe(['enqueue', 'passes', '-r', 'q1', ...home.flag]);
  assert.equal(queued.code, 0, queued.stderr);
  assert.match(queued.stdout, /^queued dag-run passes q1 \(no server runs on this home: it starts once `troupe server` runs\)\n$/);
  assert.equal(JSON.parse((await troupe(['status', 'passes', '--json', ...home.flag])).stdout).dagRun.statusLabel, 'queued');
  const dequeued = await troupe(['dequeue', '--dag-run', 'passes:q1', ...home.flag]);
  assert.equal(dequeued.code, 0, dequeued.stderr);
  assert.equal(JSON.parse((await troupe(['status', 'passes', '--json', ...home.flag])).stdout).dagRun.statusLabel, 'aborted');
  assert.equal((await troupe(['start', 'passes', '-r', 'p2', ...home.flag])).code, 0);

  const stored = async () => JSON.parse((await troupe(['status', '--json', ...home.flag])).stdout).dagRuns.map((run: { dagRunId: string }) => run.dagRunId).sort();
  assert.deepEqual(await stored(), ['p2', 'q1']);
  const logs: string[] = [];
  // One after the other: each takes the home's lock.
  for (const id of ['p2', 'q1']) logs.push(JSON.parse((await troupe(['status', 'passes', '-r', id, '--json', ...home.flag])).stdout).dagRun.log);
  // q1 was dequeued before it ran: it has no log file.
  assert.deepEqual(logs.map((path) => existsSync(path)), [true, false], JSON.stringify(logs));
  const preview = await troupe(['cleanup', 'passes', '--dry-run', ...home.flag]);
  assert.equal(preview.code, 0, preview.stderr);
  assert.match(preview.stdout, /^would remove 2 dag-runs \(every finished dag-run of passes\):\n {2}(q1|p2)\n {2}(q1|p2)\n$/);
  const kept = await troupe(['cleanup', 'passes', '--retention-days', '30', '--yes', ...home.flag]);
  assert.equal(kept.stdout, 'nothing to remove: no dag-runs of passes finished more than 30 days ago\n');
  const unasked = await troupe(['cleanup', 'passes', ...home.flag]);
  assert.equal(unasked.code, 1);
  assert.match(unasked.stderr, /pass --yes to confirm/);
  assert.deepEqual(await stored(), ['p2', 'q1'], 'the dry run and the unconfirmed one removed nothing');
  const removed = await troupe(['cleanup', 'passes', '-y', '--json', ...home.flag]);
  assert.equal(removed.code, 0, removed.stderr);
  const answer = JSON.parse(removed.stdout);
  assert.deepEqual({ ...answer, dagRunIds: answer.dagRunIds.sort() }, { name: 'passes', dryRun: false, dagRunIds: ['p2', 'q1'], removed: 2 });
  assert.deepEqual(await stored(), []);
  assert.deepEqual(logs.filter((path) => existsSync(path)), [], 'their logs went with them');
  const again = await troupe(['cleanup', 'passes', '-y', ...home.flag]);
  assert.equal(again.stdout, 'nothing to remove: no finished dag-run of passes\n');

  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  assert.deepEqual((await server.call('GET', '/dag-runs/passes')).body.dagRuns, []);
});

test('on a new home with no server, `troupe start example` runs the example DAG the home is given, as `troupe server` gives it', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  const started = await troupe(['start', 'example', '-r', 'first', ...home.flag]);
  assert.equal(started.code, 0, started.stdout + started.stderr);
  assert.match(started.stdout, /dag-run example first: succeeded in /);
  assert.match(await readFile(join(home.dir, 'dags', 'example.yaml'), 'utf8'), /steps:/);
});

// A verb run after a server crashed leaves the runs it left active to the next server: the
// command's engine is gone in a moment, and a run it resumed would be aborted as it closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkedFetch, waitUntil } from './helpers.ts';
import { exited, startCli, type CliServer } from './cli-process.ts';
import { makeHome, troupe, troupeChild } from './cli-run.ts';

async function call(base: string, path: string, body?: unknown): Promise<any> {
  const response = await checkedFetch(`${base}${path}`, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
  assert.ok(response.ok, `${path}: ${response.status}`);
  return response.json();
}

test('after a crash, a verb on the home (embedded) leaves the interrupted run running; the next server resumes it', async (t) => {
  const home = await makeHome();
  const servers: CliServer[] = [];
  t.after(async () => {
    for (const { child } of servers) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    await writeFile(join(home.dir, 'GO'), '');
    await home.remove();
  });
  const pidFile = join(home.dir, 'step.pid');
  const go = join(home.dir, 'GO');
  // The first time it waits to be killed; run again, it waits for GO, then succeeds.
  const step = `if [ -f ${pidFile} ]; then while [ ! -f ${go} ]; do sleep 0.05; done; echo again; else echo $$ > ${pidFile}; exec sleep 300; fi`;
  await home.writeDag('quick', 'steps:\n  - echo quick\n');
  await home.writeDag('resumable', `steps:\n  - name: first\n    command: echo kept\n  - name: wait\n    depends: first\n    retryPolicy:\n      limit: 1\n      intervalSec: 0\n    command: ${JSON.stringify(step)}\n`);

  const first = await startCli(['--home', home.dir, '--port', '0'], {}, { detached: true });
  servers.push(first);
  const { dagRunId } = await call(first.base, '/dags/resumable/start', {});
  assert.ok(await waitUntil(async () => (await call(first.base, `/dag-runs/resumable/${dagRunId}`)).dagRun.nodes[1].statusLabel === 'running', 20_000));
  assert.ok(await waitUntil(() => existsSync(pidFile), 20_000));
  process.kill(-first.child.pid!, 'SIGKILL');
  await exited(first.child);

  // No server holds the home: the verbs open it themselves, and go.
  const status = await troupe(['status', 'resumable', '--json', ...home.flag]);
  assert.equal(status.code, 0, status.stderr);
  // The step process the crash left is ended, and said so on stderr: stdout holds only the verb's JSON.
  assert.match(status.stderr, /ending step process group \d+ \(run resumable\/[^,]+, step wait\)/);
  assert.equal(JSON.parse(status.stdout).dagRun.statusLabel, 'running', status.stdout);
  assert.equal(JSON.parse(status.stdout).dagRun.interrupted, true);
  // In text, the run is said to be interrupted, and what will become of it.
  const details = await troupe(['status', 'resumable', ...home.flag]);
  assert.match(details.stdout, /^dag-run resumable \S+: running \(interrupted\)\n  interrupted: left running by a server that stopped without ending it; no process runs it: the next `troupe server` \(or `troupe scheduler`\) on the home resumes or settles it\n/);
  assert.match((await troupe(['status', ...home.flag])).stdout, /\nresumable +\S+ +running \(interrupted\) /);
  // Stopping it here can do nothing: one line says why and where it can be stopped.
  const stopOne = await troupe(['stop', 'resumable', '-r', dagRunId, ...home.flag]);
  assert.equal(stopOne.code, 1);
  assert.equal(stopOne.stderr, `troupe: dag-run resumable ${dagRunId} is not running: the server that ran it stopped without ending it, and no server runs on the home now: start \`troupe server\` on the home, which resumes or settles it, and stop it there\n`);
  const stopAll = await troupe(['stop', 'resumable', ...home.flag]);
  assert.equal(stopAll.code, 0, stopAll.stderr);
  assert.equal(stopAll.stdout, 'no running dag-run of resumable\n');
  assert.match(stopAll.stderr, new RegExp(`^troupe: dag-run resumable ${dagRunId} was left running by a server that stopped without ending it;`));
  const started = await troupe(['start', 'quick', ...home.flag]);
  assert.equal(started.code, 0, started.stdout + started.stderr);
  assert.equal(JSON.parse((await troupe(['status', 'resumable', '--json', ...home.flag])).stdout).dagRun.statusLabel, 'running');

  const second = await startCli(['--home', home.dir, '--port', '0'], {}, { detached: true });
  servers.push(second);
  await writeFile(go, '');
  let run: any;
  assert.ok(await waitUntil(async () => {
    run = (await call(second.base, `/dag-runs/resumable/${dagRunId}`)).dagRun;
    return !['running', 'queued', 'not_started'].includes(run.statusLabel);
  }, 20_000), 'the resumed run ends');
  assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run.nodes));
  assert.deepEqual([run.nodes[0].statusLabel, run.nodes[1].statusLabel, run.nodes[1].retryCount], ['succeeded', 'succeeded', 1]);
});

// A step starts as soon as its thread's step host is forked, before the host has loaded: a command
// killed right then still leaves nothing running (the host, once loaded, finds it gone and ends the
// groups in its watch list), and the next verb on the home finds nothing to end.
test('an embedded start killed with SIGKILL as its step begins leaves no step process behind', async (t) => {
  const marker = `troupe-cli-orphan-${process.pid}-${Date.now()}`;
  const home = await makeHome({ orphan: `steps:\n  - command: bash -c 'exec -a ${marker} sleep 60' & sleep 60\n` });
  const { child, outcome } = troupeChild(['start', 'orphan', ...home.flag]);
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await home.remove();
  });
  assert.ok(await waitUntil(() => processesNamed(marker) === 1, 30_000), 'the step and its grandchild run');
  child.kill('SIGKILL');
  await outcome;
  assert.ok(await waitUntil(() => processesNamed(marker) === 0, 10_000), 'the step host stopped the group');
  const status = await troupe(['status', 'orphan', ...home.flag]);
  // The run's first record commits while its first step starts: a kill that came before the
  // commit (a loaded machine) leaves no run to show, and nothing to end either.
  if (status.code !== 0) assert.match(status.stderr, /^troupe: no dag-runs found for DAG orphan/, status.stderr);
  assert.doesNotMatch(status.stderr, /ending step process group/);
});

function processesNamed(marker: string): number {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.startsWith(marker)).length;
}

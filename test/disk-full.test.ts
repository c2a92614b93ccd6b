// A full disk never kills the server: with the home on a small tmpfs filled to the last page, the
// server keeps answering reads, writes it cannot store answer 507 insufficient_storage, a run
// whose step log could not be written does not end succeeded, and once space is freed everything
// works again in the same process, with the records from before intact. Needs root (mount).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerOf, checkedFetch, waitUntil, type Answer } from './helpers.ts';
import { exited, startCli, type CliServer } from './cli-process.ts';
import { troupe } from './cli-run.ts';

/** Writes lines enough to need pages of their own: a log that cannot be written on a full disk. */
const TALKS = 'steps:\n  - name: talk\n    command: seq 1 3000\n  - name: after\n    command: echo done\n    depends: talk\n';

/** Writes its output once `go` exists: a run under way when the disk fills. */
const waitsThenTalks = (go: string) => `steps:\n  - name: talk\n    command: while [ ! -e ${go} ]; do sleep 0.05; done; seq 1 3000\n`;

/** Waits for `go`, printing nothing; then a script step, whose script is a file written as it starts. */
const waitsThenScript = (go: string) => `steps:\n  - name: wait\n    command: while [ ! -e ${go} ]; do sleep 0.05; done\n  - name: script\n    depends: wait\n    script: |\n      exit 0\n`;

/** The test mounts a tmpfs of its own: it needs root, as CI has. Without it the test fails, saying so. */
function assertMountable(): void {
  assert.ok(process.getuid?.() === 0 && process.platform === 'linux', 'the disk-full test needs root on Linux to mount a small tmpfs');
}

/** Writes zeros to `path` until the file system has no page left. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 512, 1]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The server being called: a request it does not answer fails with what it printed. */
let current: CliServer | undefined;

async function call(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  try {
    return answerOf(await checkedFetch(`${base}${path}`, {
      method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    }));
  } catch (error) {
    throw new Error(`${method} ${path}: ${(error as Error).message}; the server printed:\n${current?.output()}`);
  }
}

async function finalRun(base: string, name: string, dagRunId: string): Promise<any> {
  let run: any;
  assert.ok(await waitUntil(async () => {
    const answer = await call(base, 'GET', `/dag-runs/${name}/${dagRunId}`);
    run = answer.body?.dagRun;
    return answer.status === 200 && ![0, 1, 5].includes(run.status);
  }, 20_000), `run ${name}/${dagRunId} did not end: ${JSON.stringify(run)}`);
  return run;
}

test('a full disk: reads answer, writes get 507, no run ends succeeded without its log, all works again once space is freed', async (t) => {
  assertMountable();
  const home = await mkdtemp(join(tmpdir(), 'troupe-full-'));
  const outside = await mkdtemp(join(tmpdir(), 'troupe-full-go-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', home]);
  let server: CliServer | undefined;
  t.after(async () => {
    await rm(outside, { recursive: true, force: true });
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await exited(server.child);
    }
    execFileSync('umount', ['-l', home]);
    await rm(home, { recursive: true, force: true });
  });
  await mkdir(join(home, 'dags'));
  await writeFile(join(home, 'dags', 'talks.yaml'), TALKS);
  const go = join(outside, 'go');
  await writeFile(join(home, 'dags', 'waits.yaml'), waitsThenTalks(go));
  await writeFile(join(home, 'dags', 'scripted.yaml'), waitsThenScript(go));
  server = current = await startCli(['--home', home, '--port', '0']);
  const { base, child } = server;

  const before = await call(base, 'POST', '/dags/talks/start', {});
  assert.equal(before.status, 200, before.text);
  const earlier = await finalRun(base, 'talks', before.body.dagRunId);
  assert.equal(earlier.status, 4, JSON.stringify(earlier));
  const earlierLog = (await call(base, 'GET', `/dag-runs/talks/${earlier.dagRunId}/steps/talk/log`)).body.content;
  assert.match(earlierLog, /^1\n2\n3\n/);

  // A run under way when the disk fills: its record is stored, its output comes after.
  const waiting = await call(base, 'POST', '/dags/waits/start', {});
  assert.equal(waiting.status, 200, waiting.text);
  assert.ok(await waitUntil(async () => (await call(base, 'GET', `/dag-runs/waits/${waiting.body.dagRunId}`)).body.dagRun.nodes[0].status === 1));
  const scripted = await call(base, 'POST', '/dags/scripted/start', {});
  assert.equal(scripted.status, 200, scripted.text);
  assert.ok(await waitUntil(async () => (await call(base, 'GET', `/dag-runs/scripted/${scripted.body.dagRunId}`)).body.dagRun.nodes[0].status === 1));

  const filler = join(home, 'filler');
  fill(filler);
  await writeFile(go, '');

  // Writes that cannot be stored say so; the server goes on.
  const created = await call(base, 'POST', '/dags', { name: 'newdag' });
  assert.equal(created.status, 507, created.text);
  assert.equal(created.body.code, 'insufficient_storage');
  assert.match(created.body.message, /full|no space/i);
  const starts: Answer[] = [];
  for (let i = 0; i < 3; i++) {
    // The run before may still be ending (maxActiveRuns is 1): its slot is asked for again.
    let start: Answer;
    const deadline = Date.now() + 15_000;
    do {
      start = await call(base, 'POST', '/dags/talks/start', {});
      if (start.body?.code === 'max_run_reached') await sleep(100);
    } while (start.body?.code === 'max_run_reached' && Date.now() < deadline);
    starts.push(start);
    await sleep(300);
  }
  for (const start of starts) {
    assert.ok(start.status === 200 || start.status === 507, start.text);
    if (start.status === 507) assert.match(start.body.message, /^dag-run \S+ of DAG talks was stopped as it started: cannot store the record of dag-run \S+ of DAG talks: the file system of \S+ is full \(no space left\)/);
    if (start.status === 507) assert.equal(start.body.code, 'insufficient_storage', start.text);
  }
  // Reads answer while the disk is full.
  assert.equal((await call(base, 'GET', '/dags')).status, 200);
  const listed = await call(base, 'GET', '/dag-runs/talks');
  assert.equal(listed.status, 200, listed.text);
  assert.ok(listed.body.dagRuns.some((run: any) => run.dagRunId === earlier.dagRunId));
  await sleep(1500);
  assert.equal(child.exitCode, null, `the server exited: ${server.output()}`);
  assert.equal(child.signalCode, null, `the server was killed: ${server.output()}`);

  await unlink(filler);
  // The run under way could not write its output: it failed saying so, and its records written
  // while the disk was full are stored now.
  const lost = await finalRun(base, 'waits', waiting.body.dagRunId);
  assert.equal(lost.status, 2, JSON.stringify(lost));
  assert.match(lost.nodes[0].error, /^failed to execute step "[^"]+": cannot write the step log \S+: ENOSPC: no space left on device/);
  const noScript = await finalRun(base, 'scripted', scripted.body.dagRunId);
  assert.deepEqual([noScript.status, noScript.nodes[0].status], [2, 4], JSON.stringify(noScript));
  assert.match(noScript.nodes[1].error, /^failed to execute step "[^"]+": cannot write the step's script \S+: ENOSPC: no space left on device/);
  // A run accepted on the full disk could not write its step log: it did not succeed as if nothing happened.
  for (const start of starts.filter((answer) => answer.status === 200)) {
    const run = await finalRun(base, 'talks', start.body.dagRunId);
    assert.notEqual(run.status, 4, JSON.stringify(run));
    assert.match(JSON.stringify(run.nodes), /cannot write the step log/, JSON.stringify(run));
  }
  // A start refused with 507 was stopped as it started: once the store can be written it is
  // recorded aborted, never succeeded; or failed, when its step had failed on the full disk
  // before the stop reached it (a slow machine).
  for (const start of starts.filter((answer) => answer.status === 507)) {
    const dagRunId = /^dag-run (\S+) /.exec(start.body.message)![1];
    const stopped = await finalRun(base, 'talks', dagRunId);
    if (stopped.status === 2) assert.match(JSON.stringify(stopped.nodes), /cannot write the step log/, JSON.stringify(stopped));
    else assert.equal(stopped.status, 3, JSON.stringify(stopped));
  }
  // Everything works again, in the same process.
  const again = await call(base, 'POST', '/dags', { name: 'newdag' });
  assert.equal(again.status, 201, again.text);
  const after = await call(base, 'POST', '/dags/talks/start', {});
  assert.equal(after.status, 200, after.text);
  assert.equal((await finalRun(base, 'talks', after.body.dagRunId)).status, 4);
  assert.equal((await call(base, 'GET', `/dag-runs/talks/${after.body.dagRunId}/steps/talk/log`)).body.content, earlierLog);
  const kept = await call(base, 'GET', `/dag-runs/talks/${earlier.dagRunId}`);
  assert.equal(kept.body.dagRun.status, 4);
  assert.equal((await call(base, 'GET', `/dag-runs/talks/${earlier.dagRunId}/steps/talk/log`)).body.content, earlierLog);
  assert.equal(child.exitCode, null, server.output());

  // Restarted on a full disk: the room the home keeps in data/troupe.reserve goes to the lock, so
  // the server opens the home, answers reads and refuses writes with 507 (never a crash at the
  // first write). With the reserve spent and the disk still full, the home cannot be opened:
  // the command says why, with exit code 1.
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0, server.output());
  server = undefined;
  fill(filler);
  server = current = await startCli(['--home', home, '--port', '0']);
  assert.match(server.output(), /the file system of \S+ is full: the room kept in \S+troupe\.reserve was given up to open the home/);
  const read = await call(server.base, 'GET', `/dag-runs/talks/${earlier.dagRunId}`);
  assert.equal(read.body.dagRun.status, 4, read.text);
  assert.equal((await call(server.base, 'GET', `/dag-runs/talks/${earlier.dagRunId}/steps/talk/log`)).body.content, earlierLog);
  // The reserve's room is free now: the disk is filled again, as whatever filled it would.
  const filler2 = join(home, 'filler2');
  fill(filler2);
  const refused = await call(server.base, 'POST', '/dags', { name: 'later', spec: 'steps:\n  - echo later\n' });
  assert.equal(refused.status, 507, refused.text);
  server.child.kill('SIGTERM');
  assert.equal(await exited(server.child), 0, server.output());
  server = undefined;
  fill(filler2);
  const status = await troupe(['status', 'talks', '--home', home]);
  assert.equal(status.code, 1, status.stdout);
  assert.match(status.stderr, /^troupe: cannot store the lock of the home: the file system of \S+ is full \(no space left\)/);
  await assert.rejects(startCli(['--home', home, '--port', '0']), /troupe exited with 1: [\s\S]*cannot store the lock of the home: the file system of \S+ is full/);
  await unlink(filler2);

  await unlink(filler);
  server = current = await startCli(['--home', home, '--port', '0']);
  const last = await call(server.base, 'POST', '/dags/talks/start', {});
  assert.equal(last.status, 200, last.text);
  assert.equal((await finalRun(server.base, 'talks', last.body.dagRunId)).status, 4);
  assert.equal((await call(server.base, 'GET', `/dag-runs/talks/${earlier.dagRunId}`)).body.dagRun.status, 4);
  assert.ok(existsSync(join(home, 'data', 'troupe.reserve')), 'the reserve is made again once there is room');
  server.child.kill('SIGTERM');
  assert.equal(await exited(server.child), 0, server.output());
});

// kill -9 of a real server and its whole process group, then a restart on the same home: no step
// process outlives the crash, every run is accounted for, and an interrupted step follows its
// retryPolicy (the run resumes, its finished steps keeping their results).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedFetch, waitUntil } from './helpers.ts';
import { exited, startCli, type CliServer } from './cli-process.ts';

const INTERRUPTED = 'the server stopped while the run was active';

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await checkedFetch(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Whether the process runs (a zombie has ended: only its parent's wait is missing). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'latin1') : '';
  return !/\) Z /.test(stat);
}

/** A step that writes its pid to `file` and then waits, forever the first time, and succeeds when run again. */
const onceForever = (file: string) => `if [ -f ${file} ]; then echo "again $KEPT"; else echo $$ > ${file}; exec sleep 300; fi`;

for (const spawnMode of ['posix_spawn', 'child_process'] as const) {
  test(`kill -9 of the server and its process group: the restarted server ends the orphaned steps, then settles or resumes every run (steps started with ${spawnMode})`, async (t) => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-recovery-'));
    const env: Record<string, string> = spawnMode === 'child_process' ? { TROUPE_SPAWN: 'child_process' } : {};
    const servers: CliServer[] = [];
    const pids: number[] = [];
    t.after(async () => {
      for (const { child } of servers) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      for (const pid of pids) if (running(pid)) process.kill(pid, 'SIGKILL');
      await rm(home, { recursive: true, force: true });
    });
    const first = await startCli(['--home', home, '--port', '0'], env, { detached: true });
    servers.push(first);
    assert.match(first.output(), new RegExp(`steps start with ${spawnMode}`));
    const pidOf = (name: string) => join(home, `${name}.pid`);
    const dags: Record<string, string> = {
      plain: `steps:\n  - name: first\n    command: echo one\n  - name: wait\n    depends: first\n    command: ${JSON.stringify(onceForever(pidOf('plain')))}\n`,
      retried: 'steps:\n  - name: first\n    command: echo kept\n    output: KEPT\n' +
        `  - name: wait\n    depends: first\n    retryPolicy:\n      limit: 2\n      intervalSec: 0\n    command: ${JSON.stringify(onceForever(pidOf('retried')))}\n`,
      // Only exit code 75 is retried: an interruption has no exit code.
      picky: `steps:\n  - name: wait\n    retryPolicy:\n      limit: 2\n      exitCode: [75]\n    command: ${JSON.stringify(onceForever(pidOf('picky')))}\n`,
      callee: `steps:\n  - name: wait\n    command: ${JSON.stringify(onceForever(pidOf('callee')))}\n`,
      caller: 'steps:\n  - name: call\n    call: callee\n',
      retriedCallee: `steps:\n  - name: wait\n    command: ${JSON.stringify(onceForever(pidOf('retriedCallee')))}\n`,
      retriedCaller: 'steps:\n  - name: call\n    call: retriedCallee\n    retryPolicy:\n      limit: 1\n',
      // Its first run waits forever; the three enqueued behind it wait in its queue.
      queued: `steps:\n  - name: wait\n    command: ${JSON.stringify(`if [ -f ${pidOf('queued')} ]; then echo $DAG_RUN_ID >> ${join(home, 'trail')}; else echo $$ > ${pidOf('queued')}; exec sleep 300; fi`)}\n`,
    };
    for (const [name, spec] of Object.entries(dags)) await call(first.base, 'POST', '/dags', { name, spec });
    const ids: Record<string, string> = {};
    for (const name of ['plain', 'retried', 'picky', 'caller', 'retriedCaller']) ids[name] = (await call(first.base, 'POST', `/dags/${name}/start`, {})).dagRunId;
    const queuedIds = ['q0', 'q1', 'q2', 'q3'];
    for (const id of queuedIds) {
      await call(first.base, 'POST', '/dags/queued/enqueue', { dagRunId: id });
      ids[`queued:${id}`] = id;
    }
    for (const name of ['plain', 'retried', 'picky', 'callee', 'retriedCallee', 'queued']) {
      assert.ok(await waitUntil(async () => existsSync(pidOf(name)) && /\d+\n/.test(await readFile(pidOf(name), 'utf8')), 20_000), `step of ${name} runs`);
      pids.push(Number(await readFile(pidOf(name), 'utf8')));
    }
    // The step's process can write its pid before the record that says it runs is committed.
    const retriedRun = async () => (await call(first.base, 'GET', `/dag-runs/retried/${ids.retried}`)).dagRun;
    await waitUntil(async () => (await retriedRun()).nodes[1].statusLabel === 'running', 5_000);
    const before = await retriedRun();
    const firstSubRun = (await call(first.base, 'GET', `/dag-runs/retriedCaller/${ids.retriedCaller}`)).dagRun.nodes[0].subRuns[0].dagRunId;
    assert.deepEqual(before.nodes.map((node: any) => node.statusLabel), ['succeeded', 'running']);

    process.kill(-first.child.pid!, 'SIGKILL');
    await exited(first.child);
    for (const pid of pids) assert.ok(running(pid), `step process ${pid} outlives the server and its process group`);

    const second = await startCli(['--home', home, '--port', '0'], env, { detached: true });
    servers.push(second);
    for (const pid of pids) assert.ok(await waitUntil(() => !running(pid), 20_000), `step process ${pid} was ended`);
    assert.match(second.output(), /ending step process group \d+ \(run retried\/[^,]+, step wait\)/);

    const plain = (await call(second.base, 'GET', `/dag-runs/plain/${ids.plain}`)).dagRun;
    assert.equal(plain.statusLabel, 'failed');
    assert.match((await call(second.base, 'GET', `/dag-runs/plain/${ids.plain}/log`)).content, /DAG run interrupted/);
    assert.deepEqual(plain.nodes.map((node: any) => [node.statusLabel, node.error]), [['succeeded', ''], ['failed', INTERRUPTED]]);
    const picky = (await call(second.base, 'GET', `/dag-runs/picky/${ids.picky}`)).dagRun;
    assert.deepEqual([picky.statusLabel, picky.nodes[0].statusLabel, picky.nodes[0].retryCount], ['failed', 'failed', 0]);

    // The sub DAG run is not resumed on its own: it is failed, and so is its caller, whose step has no retries.
    const caller = (await call(second.base, 'GET', `/dag-runs/caller/${ids.caller}`)).dagRun;
    assert.deepEqual([caller.statusLabel, caller.nodes[0].statusLabel], ['failed', 'failed']);
    const subRunId = caller.nodes[0].subRuns[0].dagRunId;
    const callee = (await call(second.base, 'GET', `/dag-runs/caller/${ids.caller}/sub-dag-runs/${subRunId}`)).dagRunDetails;
    assert.deepEqual([callee.statusLabel, callee.nodes[0].statusLabel, callee.nodes[0].error], ['failed', 'failed', INTERRUPTED]);

    let retried: any;
    assert.ok(await waitUntil(async () => {
      retried = (await call(second.base, 'GET', `/dag-runs/retried/${ids.retried}`)).dagRun;
      return ![0, 1, 5].includes(retried.status);
    }, 20_000), 'the resumed run finishes');
    assert.equal(retried.statusLabel, 'succeeded');
    assert.notEqual(retried.log, before.log, 'a new attempt of the same run, with its own log');
    assert.deepEqual(retried.nodes[0], before.nodes[0], 'the finished step keeps its result');
    assert.deepEqual([retried.nodes[1].statusLabel, retried.nodes[1].retryCount], ['succeeded', 1]);
    const log = await call(second.base, 'GET', `/dag-runs/retried/${ids.retried}/steps/wait/log`);
    assert.equal(log.content.trim(), 'again kept', 'the kept step\'s output reaches the step run again');

    // A caller whose step retries runs its interrupted sub DAG run again, as a new attempt of it.
    let retriedCaller: any;
    assert.ok(await waitUntil(async () => {
      retriedCaller = (await call(second.base, 'GET', `/dag-runs/retriedCaller/${ids.retriedCaller}`)).dagRun;
      return ![0, 1, 5].includes(retriedCaller.status);
    }, 20_000), 'the resumed caller finishes');
    assert.deepEqual([retriedCaller.statusLabel, retriedCaller.nodes[0].retryCount], ['succeeded', 1]);
    assert.deepEqual(retriedCaller.nodes[0].subRuns.map((sub: any) => sub.dagRunId), [firstSubRun]);
    const subRun = (await call(second.base, 'GET', `/dag-runs/retriedCaller/${ids.retriedCaller}/sub-dag-runs/${firstSubRun}`)).dagRunDetails;
    assert.deepEqual([subRun.statusLabel, subRun.nodes[0].statusLabel], ['succeeded', 'succeeded']);

    // The queued runs are still queued after the crash, and run in their order once the run ahead is settled.
    const queuedRun = (id: string) => call(second.base, 'GET', `/dag-runs/queued/${id}`).then((body) => body.dagRun);
    assert.equal((await queuedRun('q0')).statusLabel, 'failed');
    assert.ok(await waitUntil(async () => (await queuedRun('q3')).statusLabel === 'succeeded', 20_000), 'the queued runs run');
    assert.deepEqual((await readFile(join(home, 'trail'), 'utf8')).trim().split('\n'), ['q1', 'q2', 'q3']);
    for (const id of ['q1', 'q2', 'q3']) assert.notEqual((await queuedRun(id)).queuedAt, '');

    const listed = (await call(second.base, 'GET', '/dag-runs')).dagRuns.map((run: any) => `${run.name}/${run.dagRunId}`).sort();
    assert.deepEqual(listed, Object.entries(ids).map(([name, id]) => `${name.replace(/:.*/, '')}/${id}`).sort(), 'no record is lost');

    second.child.kill('SIGTERM');
    await exited(second.child);
  });
}

// The stage marks behind the breakdown of a run's time (bench/breakdown.ts, docs/performance.md):
// the real server, with the bench's probe loaded, marks every stage of a one-step run, on the
// threads that pass them, in the order the run passes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkedFetch, answerOf, waitUntil } from './helpers.ts';
import { exited, startCli } from './cli-process.ts';

test('a one-step run passes every stage of the breakdown, in order, each on its own thread', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-stages-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await mkdir(join(home, 'dags'));
  await writeFile(join(home, 'dags', 'one.yaml'), 'steps:\n  - name: one\n    command: "true"\n');
  const out = join(home, 'marks.json');
  const probe = resolve(import.meta.dirname, '..', 'bench', 'stage-probe.mjs');
  const server = await startCli(['--home', home, '--port', '0'], { NODE_OPTIONS: `--import ${probe}`, TROUPE_STAGES_OUT: out });
  const started = await answerOf(await checkedFetch(`${server.base}/dags/one/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
  assert.equal(started.status, 200, started.text);
  assert.ok(await waitUntil(async () => (await answerOf(await checkedFetch(`${server.base}/dag-runs/one/${started.body.dagRunId}`))).body.dagRun.status === 4));
  // Worker threads send their marks in batches: give the last one time to arrive.
  await new Promise((resolvePromise) => setTimeout(resolvePromise, 200));
  server.child.kill('SIGTERM');
  assert.equal(await exited(server.child), 0, server.output());
  const { marks } = JSON.parse(await readFile(out, 'utf8')) as { marks: Array<{ stage: string; at: number; detail?: string; thread: string | number }> };
  marks.sort((a, b) => a.at - b.at);
  const startAt = marks.find((mark) => mark.stage === 'request.received' && mark.detail === 'POST')!.at;
  const seen = marks.filter((mark) => mark.at >= startAt && !mark.stage.startsWith('request.'));
  const order = ['run.admitted', 'record.first.durable', 'step.dispatched', 'step.received', 'process.spawned', 'process.exited', 'step.returned', 'step.result', 'record.final.durable'];
  for (const stage of order) assert.equal(seen.filter((mark) => mark.stage === stage).length, 1, `${stage} once: ${JSON.stringify(seen)}`);
  const at = (stage: string) => seen.find((mark) => mark.stage === stage)!;
  // The first record commits while the step is under way: only each thread's own order is fixed.
  for (const [before, after] of [['run.admitted', 'record.first.durable'], ['step.dispatched', 'step.received'], ['step.received', 'process.spawned'], ['process.spawned', 'process.exited'], ['process.exited', 'step.returned'], ['step.returned', 'step.result'], ['step.result', 'record.final.durable']]) {
    assert.ok(at(before).at <= at(after).at, `${before} before ${after}: ${JSON.stringify(seen)}`);
  }
  for (const stage of ['run.admitted', 'record.first.durable', 'step.dispatched', 'step.result', 'record.final.durable']) assert.equal(at(stage).thread, 'main', stage);
  for (const stage of ['step.received', 'process.spawned', 'process.exited', 'step.returned']) assert.equal(typeof at(stage).thread, 'number', `${stage} is marked on a pool thread`);
  assert.ok(marks.some((mark) => mark.stage === 'request.answered' && mark.detail === 'POST /dags/:fileName/start'));
});

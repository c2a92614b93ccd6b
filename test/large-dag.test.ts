// Large DAGs over HTTP on the real server: thousands of steps scheduled event by event (schedule.ts)
// keep Dagu's dependency semantics: order, fan-out and fan-in, failure and skip propagation,
// continueOn, retry and stop. Timing is the benchmark's (bench/large-dag.ts), never asserted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedServer, waitUntil } from './helpers.ts';

const server = sharedServer('uws');

/** A bound for a run of thousands of real processes on a loaded 2-core machine, not a measurement. */
const RUN_BOUND_MS = 300_000;

/** Waits for a final status through the run's summary (its details present every node), then reads the details once. */
async function finished(name: string, dagRunId: string): Promise<any> {
  const done = await waitUntil(async () => {
    const { body } = await server.call('GET', `/dag-runs/${name}?dagRunId=${dagRunId}`);
    return [2, 3, 4, 6].includes(body?.dagRuns?.[0]?.status);
  }, RUN_BOUND_MS);
  assert.ok(done, `run ${name}/${dagRunId} did not finish`);
  return (await server.call('GET', `/dag-runs/${name}/${dagRunId}`)).body.dagRun;
}

async function startInline(name: string, spec: string): Promise<string> {
  const { status, body } = await server.call('POST', '/dag-runs', { name, spec });
  assert.equal(status, 200, JSON.stringify(body));
  return body.dagRunId;
}

const labels = (run: any, names: string[]) => names.map((name) => run.nodes.find((node: any) => node.step.name === name).statusLabel);

test('an inline run of 2,000 chained steps succeeds, each step starting after the one before it finished', async () => {
  const steps = 2_000;
  const spec = 'steps:\n' + Array.from({ length: steps }, (_, index) => `  - name: s${index}\n    command: "true"\n`).join('');
  const run = await finished('chain2000', await startInline('chain2000', spec));
  assert.equal(run.statusLabel, 'succeeded');
  assert.equal(run.nodes.length, steps);
  run.nodes.forEach((node: any, index: number) => {
    assert.equal(node.statusLabel, 'succeeded', node.step.name);
    if (index > 0) assert.ok(node.startedAt >= run.nodes[index - 1].finishedAt, `${node.step.name} started before ${run.nodes[index - 1].step.name} finished`);
  });
});

test('fan-out and fan-in over 300 branches: the join waits for every branch; a failure aborts its branch and the join, a skip skips its branch, continueOn lets a failure through; a retry runs the failed part again', async () => {
  const flag = join(server.home, 'fan-flag');
  const branches = 300;
  const lines = ['type: graph', 'maxActiveSteps: 16', 'steps:', '  - {name: root, command: "true"}'];
  for (let index = 0; index < branches; index++) {
    const command = index === 100 ? `test -f ${flag}` : index === 200 ? 'exit 3' : '"true"';
    const extra = index === 150 ? ', preconditions: [{condition: "no", expected: "yes"}]' : index === 200 ? ', continueOn: {failure: true}' : '';
    lines.push(`  - {name: b${index}, command: ${command}, depends: root${extra}}`);
    lines.push(`  - {name: c${index}, command: "true", depends: b${index}}`);
  }
  lines.push(`  - {name: join, command: "true", depends: [${Array.from({ length: branches }, (_, index) => `c${index}`).join(', ')}]}`);
  lines.push('  - {name: after, command: "true", depends: join}');
  lines.push('  - {name: alone, command: "true"}', '');
  const dagRunId = await startInline('fan300', lines.join('\n'));
  const run = await finished('fan300', dagRunId);
  assert.equal(run.statusLabel, 'failed');
  assert.deepEqual(labels(run, ['root', 'b0', 'c0', 'b299', 'c299', 'alone']), Array(6).fill('succeeded'));
  assert.deepEqual(labels(run, ['b100', 'c100', 'join', 'after']), ['failed', 'aborted', 'aborted', 'aborted']);
  assert.deepEqual(labels(run, ['b150', 'c150']), ['skipped', 'skipped']);
  assert.deepEqual(labels(run, ['b200', 'c200']), ['failed', 'succeeded'], 'continueOn failure lets c200 run');
  const node = (name: string) => run.nodes.find((candidate: any) => candidate.step.name === name);
  assert.equal(node('c100').error, 'upstream step "b100" did not succeed');
  assert.equal(node('c150').error, 'upstream step "b150" was skipped');
  assert.equal(node('after').error, 'upstream step "join" did not succeed');
  const succeeded = run.nodes.filter((candidate: any) => candidate.statusLabel === 'succeeded').length;
  assert.equal(succeeded, 1 + 2 * branches + 1 - 4 - 1, 'every other node succeeded');

  // The retry runs b100 and what follows it again; the skip is kept, so the join stays blocked by it.
  await writeFile(flag, '');
  assert.equal((await server.call('POST', `/dag-runs/fan300/${dagRunId}/retry`, {})).status, 200);
  const retried = await finished('fan300', dagRunId);
  assert.deepEqual(labels(retried, ['b100', 'c100', 'b150', 'c150', 'join', 'after']), ['succeeded', 'succeeded', 'skipped', 'skipped', 'skipped', 'skipped']);
  assert.equal(retried.nodes.find((candidate: any) => candidate.step.name === 'join').error, 'upstream step "c150" was skipped');
});

test('a fan-in waits for all its upstreams: the join of 500 parallel steps starts after the last of them finished', async () => {
  const branches = 500;
  const lines = ['type: graph', 'maxActiveSteps: 32', 'steps:'];
  for (let index = 0; index < branches; index++) lines.push(`  - {name: p${index}, command: "true"}`);
  lines.push(`  - {name: join, command: "true", depends: [${Array.from({ length: branches }, (_, index) => `p${index}`).join(', ')}]}`, '');
  const run = await finished('fanin500', await startInline('fanin500', lines.join('\n')));
  assert.equal(run.statusLabel, 'succeeded');
  assert.ok(run.nodes.every((node: any) => node.statusLabel === 'succeeded'));
  const join = run.nodes[branches];
  const lastFinish = run.nodes.slice(0, branches).map((node: any) => node.finishedAt).sort().pop();
  assert.ok(join.startedAt >= lastFinish, `the join started at ${join.startedAt}, before ${lastFinish}`);
});

test('a stop in the middle of a long chain aborts the running step and starts no other', async () => {
  const steps = 1_000;
  const spec = 'steps:\n' + Array.from({ length: steps }, (_, index) => `  - name: s${index}\n    command: ${index === 20 ? 'sleep 30' : '"true"'}\n`).join('');
  const dagRunId = await startInline('stopchain', spec);
  assert.ok(await waitUntil(async () => (await server.call('GET', `/dag-runs/stopchain/${dagRunId}`)).body.dagRun.nodes[20].statusLabel === 'running', RUN_BOUND_MS));
  assert.equal((await server.call('POST', `/dag-runs/stopchain/${dagRunId}/stop`)).status, 200);
  const run = await finished('stopchain', dagRunId);
  assert.equal(run.statusLabel, 'aborted');
  assert.deepEqual(run.nodes.slice(0, 20).map((node: any) => node.statusLabel), Array(20).fill('succeeded'));
  assert.equal(run.nodes[20].statusLabel, 'aborted');
  assert.ok(run.nodes.slice(21).every((node: any) => node.statusLabel === 'not_started'));
});

// Admission under concurrent bursts: maxActiveRuns admits exactly up to its limit, never more,
// never fewer, however the starts interleave (one synchronous decision per start: docs/architecture.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

const sleeper = (limit: number) => `maxActiveRuns: ${limit}\nsteps:\n  - sleep 30\n`;

for (const limit of [1, 2, 5]) {
  test(`20 concurrent starts of a DAG with maxActiveRuns ${limit} admit exactly ${limit}`, async (t) => {
    const server = await startTestServer();
    t.after(() => server.close());
    const name = `burst${limit}`;
    await server.writeDag(name, sleeper(limit));
    const answers = await Promise.all(Array.from({ length: 20 }, () => server.call('POST', `/dags/${name}/start`, {})));
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.equal(admitted.length, limit, answers.map((answer) => `${answer.status} ${answer.text}`).join('\n'));
    for (const answer of refused) {
      assert.equal(answer.status, 409);
      assert.equal(answer.body.code, 'max_run_reached');
    }
    const runs = await server.call('GET', `/dag-runs/${name}`);
    assert.equal(runs.body.dagRuns.length, limit, 'every admitted run is recorded, no refused one');
    await server.call('POST', `/dags/${name}/stop-all`, {});
  });
}

test('after a burst fills maxActiveRuns, a finished run frees exactly its slot', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  await server.writeDag('refill', sleeper(3));
  const first = await Promise.all(Array.from({ length: 10 }, () => server.call('POST', '/dags/refill/start', {})));
  const ids = first.filter((answer) => answer.status === 200).map((answer) => answer.body.dagRunId as string);
  assert.equal(ids.length, 3);
  const stop = await server.call('POST', `/dag-runs/refill/${ids[0]}/stop`, {});
  assert.equal(stop.status, 200);
  await server.waitForRun('refill', ids[0]);
  const second = await Promise.all(Array.from({ length: 10 }, () => server.call('POST', '/dags/refill/start', {})));
  assert.equal(second.filter((answer) => answer.status === 200).length, 1, second.map((answer) => answer.text).join('\n'));
  await server.call('POST', '/dags/refill/stop-all', {});
});

test('concurrent inline runs of one name with maxActiveRuns admit exactly the limit', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const answers = await Promise.all(Array.from({ length: 12 }, () => server.call('POST', '/dag-runs', { name: 'inlineburst', spec: sleeper(4) })));
  assert.equal(answers.filter((answer) => answer.status === 200).length, 4, answers.map((answer) => answer.text).join('\n'));
  assert.ok(answers.filter((answer) => answer.status !== 200).every((answer) => answer.status === 409 && answer.body.code === 'max_run_reached'));
  await server.call('POST', '/dags/inlineburst/stop-all', {}).catch(() => undefined);
  for (const run of (await server.call('GET', '/dag-runs/inlineburst')).body.dagRuns) {
    if (run.status === 1) await server.call('POST', `/dag-runs/inlineburst/${run.dagRunId}/stop`, {});
  }
});

// POST /dags/{fileName}/start-sync: start a run and answer once it has ended, over HTTP, both carriers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch, describeOnCarriers } from './helpers.ts';

describeOnCarriers('start and wait', (server) => {
  test('answers with the run\'s details once it has ended: succeeded, or failed', async () => {
    await server.writeDag('sync-ok', 'params:\n  - WHO: x\nsteps:\n  - name: a\n    command: echo hi ${WHO}\n');
    await server.writeDag('sync-bad', 'steps:\n  - name: a\n    command: "exit 3"\n');
    const ok = await server.call('POST', '/dags/sync-ok/start-sync', { timeout: 60, params: '{"WHO":"there"}' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.dagRun.status, 4);
    assert.equal(ok.body.dagRun.name, 'sync-ok');
    assert.equal(ok.body.dagRun.nodes[0].status, 4);
    assert.equal(await server.stepLog('sync-ok', ok.body.dagRun.dagRunId, 'a'), 'hi there');
    const bad = await server.call('POST', '/dags/sync-bad/start-sync', { timeout: 60, dagRunId: 'sync-bad-1' });
    assert.equal(bad.status, 200);
    assert.equal(bad.body.dagRun.dagRunId, 'sync-bad-1');
    assert.equal(bad.body.dagRun.status, 2);
  });

  test('408 with the run id when the timeout passes first; the run goes on', async () => {
    await server.writeDag('sync-slow', 'steps:\n  - name: a\n    command: sleep 2\n');
    const late = await server.call('POST', '/dags/sync-slow/start-sync', { timeout: 1 });
    assert.equal(late.status, 408, late.text);
    assert.equal(late.body.code, 'request_timeout');
    const { dagRunId } = late.body.details;
    assert.match(dagRunId, /\S/);
    const run = await server.waitForRun('sync-slow', dagRunId);
    assert.equal(run.status, 4, 'the run went on to the end');
  });

  test('the errors of start, and a timeout out of range', async () => {
    await server.writeDag('sync-one', 'maxActiveRuns: 1\nsteps:\n  - name: a\n    command: sleep 1\n');
    for (const body of [{}, { timeout: 0 }, { timeout: 86_401 }, { timeout: 1.5 }, { timeout: '5' }]) {
      const answer = await server.call('POST', '/dags/sync-one/start-sync', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.code, 'bad_request');
    }
    assert.equal((await server.call('POST', '/dags/sync-missing/start-sync', { timeout: 5 })).status, 404);
    const first = server.call('POST', '/dags/sync-one/start-sync', { timeout: 30, dagRunId: 'sync-one-a' });
    await server.waitForRun('sync-one', 'sync-one-a', (run) => run.status === 1);
    const taken = await server.call('POST', '/dags/sync-one/start-sync', { timeout: 5, dagRunId: 'sync-one-a' });
    assert.equal(taken.status, 409);
    assert.equal((await first).status, 200);
  });

  test('an Idempotency-Key repeat gets the first answer and starts nothing', async () => {
    await server.writeDag('sync-idem', 'steps:\n  - name: a\n    command: echo once\n');
    const send = () => checkedFetch(`${server.base}/dags/sync-idem/start-sync`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'sync-key-1' }, body: JSON.stringify({ timeout: 30 }),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const first = await send();
    const again = await send();
    assert.equal(first.status, 200);
    assert.deepEqual(again, first);
    const runs = await server.call('GET', '/dag-runs?name=sync-idem');
    assert.equal(runs.body.dagRuns.length, 1);
  });
});

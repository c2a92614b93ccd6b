// a retry respects maxActiveRuns as a start does; so does a reschedule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedServer, waitUntil } from './helpers.ts';

const server = sharedServer();

test('retry and reschedule are refused with 409 max_run_reached while the DAG has maxActiveRuns active, and go once it has room', async () => {
  const spec = 'maxActiveRuns: 1\nparams:\n  - WAIT: "0"\nsteps:\n  - name: s\n    command: sleep $WAIT; exit 1\n';
  assert.equal((await server.call('POST', '/dags', { name: 'one_at_a_time', spec })).status, 201);
  const failed = await server.startAndWait('one_at_a_time');
  assert.equal(failed.statusLabel, 'failed');
  const long = await server.call('POST', '/dags/one_at_a_time/start', { params: '{"WAIT":"60"}' });
  assert.equal(long.status, 200, long.text);
  assert.ok(await waitUntil(async () => (await server.call('GET', `/dag-runs/one_at_a_time/${long.body.dagRunId}`)).body.dagRun.status === 1));

  const retry = await server.call('POST', `/dag-runs/one_at_a_time/${failed.dagRunId}/retry`, { dagRunId: failed.dagRunId });
  assert.equal(retry.status, 409, retry.text);
  assert.equal(retry.body.code, 'max_run_reached');
  const reschedule = await server.call('POST', `/dag-runs/one_at_a_time/${failed.dagRunId}/reschedule`, {});
  assert.equal(reschedule.status, 409, reschedule.text);
  assert.equal((await server.call('GET', `/dag-runs/one_at_a_time/${failed.dagRunId}`)).body.dagRun.statusLabel, 'failed', 'the refused retry changed nothing');

  assert.equal((await server.call('POST', `/dag-runs/one_at_a_time/${long.body.dagRunId}/stop`)).status, 200);
  await server.waitForRun('one_at_a_time', long.body.dagRunId);
  const again = await server.call('POST', `/dag-runs/one_at_a_time/${failed.dagRunId}/retry`, { dagRunId: failed.dagRunId });
  assert.equal(again.status, 200, again.text);
  const retried = await server.waitForRun('one_at_a_time', failed.dagRunId, (run) => run.status === 2 && run.startedAt !== failed.startedAt);
  assert.equal(retried.statusLabel, 'failed');
});

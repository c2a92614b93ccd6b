// Regression (found by the fuzz suite): a name or run id longer than LMDB's key limit (1978 bytes)
// in a run read answered 500 ("Key of size 3000 was too large"). No run can have such a name or id
// (core/names.ts), so these reads find nothing: 404, or an empty list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedServer } from './helpers.ts';

const server = sharedServer('node', { fx: 'steps:\n  - "true"\n' });

test('run reads with a name or id too long for a store key find nothing instead of failing', async () => {
  const long = 'b'.repeat(3000);
  const longer = 'b'.repeat(6000);
  const notFound = [`/dag-runs/${long}/latest`, `/dag-runs/fx/${longer}`, `/dag-runs/${long}/x`, `/dag-runs/${longer}/${longer}/spec`,
    `/dag-runs/${long}/x/outputs`, `/dag-runs/${long}/x/log`, `/dag-runs/${long}/x/sub-dag-runs`, `/dags/fx/dag-runs/${longer}`];
  for (const path of notFound) {
    const { status, body } = await server.call('GET', path);
    assert.equal(status, 404, path.slice(0, 60));
    assert.equal(body.code, 'not_found');
  }
  for (const path of [`/dag-runs/${long}`, `/dag-runs?name=${long}`, `/dag-runs?name=${long}&dagRunId=${longer}`]) {
    const { status, body } = await server.call('GET', path);
    assert.equal(status, 200, path.slice(0, 60));
    assert.deepEqual(body.dagRuns, []);
  }
  const stop = await server.call('POST', `/dag-runs/${long}/${longer}/stop`);
  assert.equal(stop.status, 404);
});

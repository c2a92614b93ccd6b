// a wrong method gets 405 with Allow (never a 400 as if the request were bad, nor
// a 404); HEAD is served wherever GET is; a path that is not served is 404 whatever the method.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch, describeOnCarriers } from './helpers.ts';

describeOnCarriers('methods', (server) => {
  test('a method the path does not serve: 405, Allow naming the ones it does, the error document', async () => {
    const wrong = await server.call('PATCH', '/dags');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD, POST');
    assert.equal(wrong.body.code, 'method_not_allowed');
    assert.deepEqual(wrong.body.details, { allow: ['GET', 'HEAD', 'POST'] });
    const run = await server.call('PUT', '/dag-runs/some/run-1/stop');
    assert.equal(run.status, 405);
    assert.equal(run.headers.get('allow'), 'POST');
    const health = await server.call('DELETE', '/health');
    assert.equal(health.status, 405);
    assert.equal(health.headers.get('allow'), 'GET, HEAD');
  });

  test('HEAD on a GET route answers its headers without a body', async () => {
    const response = await checkedFetch(`${server.base}/health`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal(await response.text(), '');
  });

  test('a path that is not served is 404 for every method, never 405', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const response = await server.call(method, '/dags/some/not-a-route/at-all');
      assert.equal(response.status, 404, `${method}: ${response.text}`);
      assert.equal(response.body.code, 'not_found');
    }
  });
});

// a workflow-action step (and its alias types) passes validation, and its run fails
// at once with an error saying this deployment cannot run marketplace actions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
before(async () => { server = await startTestServer(); });
after(() => server.close());

for (const type of ['workflow-action', 'github-action', 'gha']) {
  test(`executor ${type}: valid, and its run fails at once saying why`, async () => {
    const name = `action_${type.replace(/-/g, '_')}`;
    const spec = ['steps:', '  - name: checkout', `    executor: ${type}`, '    command: actions/checkout@v4', '    params:', '      repository: example/repo'].join('\n');
    const validated = await server.call('POST', '/dags/validate', { spec });
    assert.equal(validated.status, 200, validated.text);
    assert.equal(validated.body.valid, true, validated.text);
    assert.equal((await server.call('POST', '/dags', { name, spec })).status, 201);
    const run = await server.startAndWait(name);
    assert.equal(run.status, 2);
    assert.equal(run.nodes[0].status, 2);
    assert.match(run.nodes[0].error, /workflow-action actions\/checkout@v4: this troupe build does not run marketplace actions/);
    const stderr = await server.call('GET', `/dag-runs/${name}/${run.dagRunId}/steps/checkout/log?stream=stderr`);
    assert.match(stderr.body.content, /cannot reach/);
    const stdout = await stat(run.nodes[0].stdout);
    assert.deepEqual([stdout.isFile(), stdout.size], [true, 0], 'its stdout log exists, empty');
  });
}

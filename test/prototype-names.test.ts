// Names taken from input (DAG, step, output, param, env and queue names) that are also keys of
// Object.prototype work like any other name: nothing keyed by input is a plain object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

// `plainname` is the control: every other name must behave as it does.
const NAMES = ['plainname', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

const spec = (name: string) => [
  'params:',
  `  - ${name}: fromparam`,
  'env:',
  `  - ${name}: fromenv`,
  `queue: ${name}`,
  'steps:',
  `  - name: ${name}`,
  `    command: echo "v=\${${name}}"`,
  `    output: ${name}`,
  '  - name: second',
  `    command: echo "\${${name}}"`,
  '    output:',
  '      name: RESULT',
  `      key: ${name}`,
  '    preconditions:',
  `      - condition: "\${${name}}"`,
  '        expected: "v=fromrequest"',
  '',
].join('\n');

test('DAGs, steps, outputs, params, env and queues named like Object.prototype keys work', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  for (const name of NAMES) {
    const validated = await server.call('POST', '/dags/validate', { name, spec: spec(name) });
    assert.equal(validated.status, 200, `${name}: ${validated.text}`);
    assert.equal(validated.body.valid, true, `${name}: ${validated.text}`);
    const created = await server.call('POST', '/dags', { name, spec: spec(name) });
    assert.equal(created.status, 201, `${name}: ${created.text}`);
    const started = await server.call('POST', `/dags/${name}/start`, { params: `${name}=fromrequest` });
    assert.equal(started.status, 200, `${name}: ${started.text}`);
    const run = await server.waitForRun(name, started.body.dagRunId);
    assert.equal(run.statusLabel, 'succeeded', `${name}: ${JSON.stringify(run)}`);
    assert.deepEqual(run.nodes.map((node: any) => node.step.name), [name, 'second']);
    const outputs = await server.call('GET', `/dag-runs/${name}/${started.body.dagRunId}/outputs`);
    assert.equal(outputs.status, 200, outputs.text);
    // A param wins over the DAG's env (evaluated first, as in Dagu), the request's over the default, and step 1's output over all.
    const own = (record: object, key: string) => Object.getOwnPropertyDescriptor(record, key)?.value;
    assert.equal(own(outputs.body.outputs, name), 'v=fromrequest', outputs.text);
    assert.deepEqual(new Set(Object.values(outputs.body.outputs)), new Set(['v=fromrequest']), outputs.text);
    assert.equal(own(JSON.parse(outputs.body.metadata.params), name), 'fromrequest', outputs.text);
    for (const path of [`/dags/${name}`, `/dags/${name}/spec`, `/dags/${name}/dag-runs`, `/dag-runs/${name}`,
      `/dag-runs/${name}/latest`, `/dag-runs/${name}/${started.body.dagRunId}/spec`, `/dag-runs?name=${name}`]) {
      const read = await server.call('GET', path);
      assert.equal(read.status, 200, `${path}: ${read.text}`);
    }
    const inline = await server.call('POST', '/dag-runs', { name: `${name.replace(/_/g, '')}inline`, spec: spec(name) });
    assert.equal(inline.status, 200, `${name}: ${inline.text}`);
  }
  // An env secret read from a variable named like a prototype key is unset, as any absent one.
  const secret = await server.call('POST', '/dag-runs', { name: 'protosecret', spec: 'secrets:\n  - {name: S, provider: env, key: constructor}\nsteps:\n  - echo hi\n' });
  assert.equal(secret.status, 400, secret.text);
  assert.match(secret.body.message, /environment variable constructor is not set/);
  const listed = await server.call('GET', '/dags?perPage=100');
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.dags.map((dag: any) => dag.fileName).sort(), [...NAMES].sort());
  const tags = await server.call('GET', '/dags/tags');
  assert.equal(tags.status, 200);
  for (const name of NAMES) {
    assert.equal((await server.call('POST', `/dags/${name}/rename`, { newFileName: `${name}2` })).status, 200);
    assert.equal((await server.call('DELETE', `/dags/${name}2`)).status, 204);
  }
});

// A call cycle between DAGs (a DAG calling itself, directly or through others, stored or local) is a
// definition error wherever the definitions can be seen: validate, create, edit and start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

test('call cycles are definition errors at validate, create, edit and start', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());

  const selfValidated = await server.call('POST', '/dags/validate', { name: 'selfy', spec: 'steps:\n  - call: selfy\n' });
  assert.equal(selfValidated.status, 200);
  assert.equal(selfValidated.body.valid, false);
  assert.ok(selfValidated.body.errors.some((error: string) => error.includes('call cycle: selfy -> selfy')), selfValidated.text);

  const locals = 'steps:\n  - call: left\n---\nname: left\nsteps:\n  - call: right\n---\nname: right\nsteps:\n  - run: left\n';
  const localValidated = await server.call('POST', '/dags/validate', { spec: locals });
  assert.equal(localValidated.body.valid, false);
  assert.ok(localValidated.body.errors.some((error: string) => error.includes('call cycle: left -> right -> left')), localValidated.text);

  const selfCreated = await server.call('POST', '/dags', { name: 'selfmade', spec: 'steps:\n  - call: selfmade.yaml\n' });
  assert.equal(selfCreated.status, 400);
  assert.match(selfCreated.body.message, /call cycle: selfmade -> selfmade/);
  assert.equal((await server.call('GET', '/dags/selfmade')).status, 404);

  assert.equal((await server.call('POST', '/dags', { name: 'leaf', spec: 'steps:\n  - command: "true"\n' })).status, 201);
  assert.equal((await server.call('POST', '/dags', { name: 'caller', spec: 'steps:\n  - executor: dag\n    command: leaf\n' })).status, 201);
  const closing = await server.call('PUT', '/dags/leaf/spec', { spec: 'steps:\n  - call: caller\n' });
  assert.equal(closing.status, 200);
  assert.deepEqual(closing.body.errors, ['call cycle: leaf -> caller -> leaf']);
  assert.match((await server.call('GET', '/dags/leaf/spec')).body.spec, /command: "true"/, 'the file is left as it was');
  // Validated under the caller's name, a spec calling `leaf` is no cycle while leaf is stored as it is.
  assert.equal((await server.call('POST', '/dags/validate', { name: 'caller', spec: 'steps:\n  - call: leaf\n' })).body.valid, true);
  const createdIntoCycle = await server.call('POST', '/dags', { name: 'newcomer', spec: 'steps:\n  - call: caller\n' });
  assert.equal(createdIntoCycle.status, 201, 'calling into an acyclic chain is fine');

  // Files written behind the API's back: the start sees the cycle and refuses it.
  await server.writeDag('ping', 'steps:\n  - command: "true"\n  - call: pong\n');
  await server.writeDag('pong', 'steps:\n  - call: ping\n');
  const started = await server.call('POST', '/dags/ping/start', {});
  assert.equal(started.status, 400);
  assert.equal(started.body.code, 'bad_request');
  assert.match(started.body.message, /call cycle: ping -> pong -> ping/);
  assert.deepEqual((await server.call('GET', '/dag-runs/ping')).body.dagRuns, []);

  const inline = await server.call('POST', '/dag-runs', { name: 'inlineloop', spec: 'steps:\n  - call: inner\n---\nname: inner\nsteps:\n  - call: inner\n' });
  assert.equal(inline.status, 400);
  assert.match(inline.body.message, /call cycle: inner -> inner/);

  // A target with a variable is decided at run time: the runtime nesting limit covers it.
  const dynamic = await server.call('POST', '/dags/validate', { name: 'dyn', spec: 'params: T=dyn\nsteps:\n  - call: ${T}\n' });
  assert.ok(!dynamic.body.errors.some((error: string) => error.includes('call cycle')), dynamic.text);
  assert.equal((await server.call('GET', '/health')).status, 200);
});

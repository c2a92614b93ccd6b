// `latest` names a DAG's newest run in every run path, so no run may take it as its id; and an
// empty definition (blank, or only comments) is a definition error, not a valid DAG of no steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

test('a run id of "latest" is refused at start, inline run and retry', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  assert.equal((await server.call('POST', '/dags', { name: 'reserved', spec: 'steps:\n  - command: "true"\n' })).status, 201);
  const started = await server.call('POST', '/dags/reserved/start', { dagRunId: 'latest' });
  assert.equal(started.status, 400, started.text);
  assert.equal(started.body.code, 'bad_request');
  assert.match(started.body.message, /dagRunId "latest" is reserved/);
  const inline = await server.call('POST', '/dag-runs', { name: 'reservedinline', dagRunId: 'latest', spec: 'steps:\n  - command: "true"\n' });
  assert.equal(inline.status, 400, inline.text);
  assert.deepEqual((await server.call('GET', '/dag-runs/reserved')).body.dagRuns, []);

  const first = await server.call('POST', '/dags/reserved/start', {});
  await server.waitForRun('reserved', first.body.dagRunId);
  const retried = await server.call('POST', `/dag-runs/reserved/${first.body.dagRunId}/retry`, { dagRunId: 'latest' });
  assert.equal(retried.status, 400, retried.text);
  assert.equal((await server.call('GET', '/dag-runs/reserved/latest')).body.dagRun.dagRunId, first.body.dagRunId);
});

test('an empty, blank or comment-only spec is invalid at validate, create, edit and inline run', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  assert.equal((await server.call('POST', '/dags', { name: 'kept', spec: 'steps:\n  - command: "true"\n' })).status, 201);
  for (const spec of ['', '  \n\t\n', '# only a comment\n# and another\n']) {
    const validated = await server.call('POST', '/dags/validate', { spec });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.valid, false, JSON.stringify(spec));
    assert.deepEqual(validated.body.errors, ['the definition is empty: a DAG needs at least steps']);
    const created = await server.call('POST', '/dags', { name: 'emptydag', spec });
    assert.equal(created.status, 400, created.text);
    assert.match(created.body.message, /the definition is empty/);
    const edited = await server.call('PUT', '/dags/kept/spec', { spec });
    assert.deepEqual(edited.body.errors, ['the definition is empty: a DAG needs at least steps']);
    const inline = await server.call('POST', '/dag-runs', { name: 'emptyinline', spec });
    assert.equal(inline.status, 400, inline.text);
  }
  assert.equal((await server.call('GET', '/dags/emptydag')).status, 404);
  assert.match((await server.call('GET', '/dags/kept/spec')).body.spec, /command: "true"/);
  // A file left empty by hand is listed with the problem and cannot start.
  await server.writeDag('blank', '\n');
  const listed = (await server.call('GET', '/dags')).body.dags.find((dag: any) => dag.fileName === 'blank');
  assert.deepEqual(listed.errors, ['the definition is empty: a DAG needs at least steps']);
  const started = await server.call('POST', '/dags/blank/start', {});
  assert.equal(started.status, 400);
  assert.match(started.body.message, /the definition is empty/);
});

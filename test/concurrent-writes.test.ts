// Writes to one DAG file are serialized: concurrent edits all land (the last one wins), concurrent
// renames of one DAG move it once and the others hear 404, renames onto one name 409; never a 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from './helpers.ts';

const spec = (i: number) => `steps:\n  - name: s${i}\n    command: echo ${i}\n`;

test('60 concurrent edits of one DAG all succeed and leave one of them, with no temporary file behind', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  assert.equal((await server.call('POST', '/dags', { name: 'edited', spec: spec(-1) })).status, 201);
  const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => server.call('PUT', '/dags/edited/spec', { spec: spec(i) })));
  assert.deepEqual(answers.map((answer) => answer.status), Array(60).fill(200), answers.find((answer) => answer.status !== 200)?.text);
  for (const answer of answers) assert.deepEqual(answer.body.errors, []);
  const stored = (await server.call('GET', '/dags/edited/spec')).body.spec;
  assert.ok(Array.from({ length: 60 }, (_, i) => spec(i)).includes(stored), stored);
  assert.deepEqual((await readdir(join(server.home, 'dags'))).filter((name) => name.startsWith('edited')), ['edited.yaml']);
});

test('10 concurrent renames of one DAG: one moves it, the others answer 404; onto one name: 409', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  assert.equal((await server.call('POST', '/dags', { name: 'moved', spec: spec(0) })).status, 201);
  const renames = await Promise.all(Array.from({ length: 10 }, (_, i) => server.call('POST', '/dags/moved/rename', { newFileName: `moved${i}` })));
  const statuses = renames.map((answer) => answer.status).sort();
  assert.deepEqual(statuses, [200, ...Array(9).fill(404)], renames.map((answer) => answer.text).join('\n'));
  const names = (await server.call('GET', '/dags')).body.dags.map((dag: any) => dag.fileName);
  assert.equal(names.length, 1);
  assert.equal(names[0], `moved${renames.findIndex((answer) => answer.status === 200)}`);

  for (let i = 0; i < 10; i++) assert.equal((await server.call('POST', '/dags', { name: `source${i}`, spec: spec(i) })).status, 201);
  const ontoOne = await Promise.all(Array.from({ length: 10 }, (_, i) => server.call('POST', `/dags/source${i}/rename`, { newFileName: 'together' })));
  assert.deepEqual(ontoOne.map((answer) => answer.status).sort(), [200, ...Array(9).fill(409)], ontoOne.map((answer) => answer.text).join('\n'));

  // Edits, renames and removals of one DAG at once: each answers what it found, never a 500.
  assert.equal((await server.call('POST', '/dags', { name: 'contested', spec: spec(0) })).status, 201);
  const mixed = await Promise.all([
    ...Array.from({ length: 20 }, (_, i) => server.call('PUT', '/dags/contested/spec', { spec: spec(i) })),
    server.call('POST', '/dags/contested/rename', { newFileName: 'contested2' }),
    server.call('DELETE', '/dags/contested'),
    ...Array.from({ length: 20 }, (_, i) => server.call('PUT', '/dags/contested/spec', { spec: spec(i) })),
  ]);
  for (const answer of mixed) assert.ok([200, 204, 404].includes(answer.status), answer.text);
  const left = (await readdir(join(server.home, 'dags'))).filter((name) => name.startsWith('contested'));
  assert.ok(left.length <= 1 && left.every((name) => name.endsWith('.yaml')), left.join(', '));
});

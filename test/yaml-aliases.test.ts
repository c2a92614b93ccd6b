// YAML aliases are bounded on purpose: a billion laughs, a big anchor used thousands of times and a
// self-containing alias are definition errors (validate 200 valid:false, create and inline runs
// 400, edit 200 with errors), never a 500; ordinary specs with many aliases and merge keys work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)]
  .map((line) => `  ${line}`).join('\n');
const BILLION_LAUGHS = `env:\n  - X: y\nsteps:\n  - command: "true"\n    params:\n${laughs.replace(/^ {2}/gm, '      ')}\n`;
const BIG_ANCHOR = `type: graph\nsteps:\n  - &g [${Array(200).fill('{command: "true"}').join(', ')}]\n${Array(9_999).fill('  - *g').join('\n')}\n`;
const SELF_CONTAINING = 'steps: &s\n  - *s\n';

const ALIASES_100 = `env:\n  - GREETING: &greeting hello\nsteps:\n${Array.from({ length: 100 }, (_, i) => `  - name: s${i}\n    command: echo\n    env:\n      - G: *greeting\n`).join('')}`;
const MERGES_300 = `steps:\n  - &base {name: s0, command: echo merged}\n${Array.from({ length: 299 }, (_, i) => `  - <<: *base\n    name: s${i + 1}\n`).join('')}`;

test('alias bombs are definition errors at every door, never a 500', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  assert.equal((await server.call('POST', '/dags', { name: 'target', spec: 'steps:\n  - command: "true"\n' })).status, 201);
  for (const [label, spec, message] of [
    ['billion laughs', BILLION_LAUGHS, /too many aliases/],
    ['big anchor', BIG_ANCHOR, /aliases expand the document to more than 1000000 values/],
    ['self-containing alias', SELF_CONTAINING, /alias names a node that contains it/],
  ] as const) {
    const validated = await server.call('POST', '/dags/validate', { spec });
    assert.equal(validated.status, 200, `${label}: ${validated.text.slice(0, 300)}`);
    assert.equal(validated.body.valid, false, label);
    assert.ok(validated.body.errors.some((error: string) => message.test(error)), `${label}: ${validated.text.slice(0, 300)}`);
    const created = await server.call('POST', '/dags', { name: 'bomb', spec });
    assert.equal(created.status, 400, `${label}: ${created.text.slice(0, 300)}`);
    assert.match(created.body.message, message);
    const edited = await server.call('PUT', '/dags/target/spec', { spec });
    assert.equal(edited.status, 200, `${label}: ${edited.text.slice(0, 300)}`);
    assert.ok(edited.body.errors.some((error: string) => message.test(error)), label);
    const inline = await server.call('POST', '/dag-runs', { name: 'bomb', spec });
    assert.equal(inline.status, 400, `${label}: ${inline.text.slice(0, 300)}`);
    assert.match(inline.body.message, message);
  }
  assert.match((await server.call('GET', '/dags/target/spec')).body.spec, /command: "true"/);
  assert.equal((await server.call('GET', '/dags/bomb')).status, 404);
  assert.equal((await server.call('GET', '/health')).status, 200);
});

test('an ordinary spec with 100 alias uses or 300 merge keys is valid and runs', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  for (const [name, spec] of [['aliases', ALIASES_100], ['merges', MERGES_300]] as const) {
    const validated = await server.call('POST', '/dags/validate', { spec });
    assert.equal(validated.status, 200, validated.text.slice(0, 300));
    assert.deepEqual(validated.body.errors, [], name);
    assert.equal(validated.body.valid, true, name);
    assert.equal((await server.call('POST', '/dags', { name, spec })).status, 201, name);
    const started = await server.call('POST', `/dags/${name}/start`, {});
    assert.equal(started.status, 200, started.text);
    const run = await server.waitForRun(name, started.body.dagRunId);
    assert.equal(run.statusLabel, 'succeeded', name);
    assert.equal(run.nodes.length, name === 'aliases' ? 100 : 300);
  }
  const details = await server.call('GET', '/dags/merges');
  assert.deepEqual(new Set(details.body.dag.steps.map((step: any) => [step.command, ...step.args].join(' '))), new Set(['echo merged']));
});

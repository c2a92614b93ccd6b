// YAML aliases are bounded on purpose: a billion laughs, a big anchor used thousands of times and a
// self-containing alias are definition errors (validate 200 valid:false, create and inline runs
// 400, edit 200 with errors), never a 500; ordinary specs with many aliases and merge keys work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';
import { sendAlone as send, type SentAlone as Sent } from './raw-http.ts';

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

/** `count` anchors, each used once, in a list of tags: about 12 bytes each, as an adversary packs them. */
function anchorsAndAliases(count: number): string {
  const names = Array.from({ length: count }, (_, i) => i.toString(36));
  return `tags: [${names.map((name) => `&${name} x,*${name}`).join(',')}]\nsteps:\n  - command: "true"\n`;
}

test('aliases cost no more than their text, and no parse holds the event loop: /health is answered while three specs of 5,000 anchors are read', { timeout: 120_000 }, async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const port = server.troupe.server.port;
  const packed = anchorsAndAliases(5_000);
  assert.ok(packed.length > 55_000 && packed.length < 64 * 1024, String(packed.length));

  // Three at once, then /health once they are all sent. The parse thread reads them one after
  // another while the event loop answers /health; a parse on the event loop answers it last.
  const order: string[] = [];
  const note = (label: string, sent: Sent) => sent.answer.then((answer) => { order.push(label); return answer; });
  const sent = Array.from({ length: 3 }, () => send(port, 'POST', '/dags/validate', { spec: packed, name: 'packed' }));
  const packedAnswers = sent.map((request, i) => note(`packed${i}`, request));
  await Promise.all(sent.map((request) => request.written));
  const health = await note('health', send(port, 'GET', '/health'));
  assert.equal(health.status, 200);
  for (const { status, body } of await Promise.all(packedAnswers)) {
    assert.equal(status, 200);
    assert.deepEqual(body.errors, []);
    assert.equal(body.dag.tags.length, 10_000);
  }
  assert.notEqual(order.at(-1), 'health', order.join(' '));

  // Near the body limit (the library's own lookup took 49 s here): read in one pass.
  const big = anchorsAndAliases(70_000);
  assert.ok(big.length > 850_000 && big.length < 1_000_000, String(big.length));
  const validated = await server.call('POST', '/dags/validate', { spec: big, name: 'big' });
  assert.equal(validated.status, 200);
  assert.deepEqual(validated.body.errors, []);
  assert.equal(validated.body.dag.tags.length, 140_000);
  assert.equal((await server.call('GET', '/health')).status, 200);
});

// Idempotent submits: the Idempotency-Key header on start, enqueue and the inline runs, over HTTP
// on the real server: a repeat starts nothing and gets the first answer; the key is the caller's;
// the answers survive a restart; a mismatch, a repeat in flight and a malformed key are refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/core/index.ts';
import { answerOf, checkedFetch, describeOnCarriers, startTestServer, type Answer, type TestServer } from './helpers.ts';
import { basic, bearer, signIn, type Credential } from './auth-support.ts';

/** maxActiveRuns: runs of one DAG started one after another may overlap on a loaded machine. */
const QUICK = 'maxActiveRuns: 100\nsteps:\n  - name: s\n    command: "true"\n';
const INLINE = 'name: idem-inline\nsteps:\n  - name: s\n    command: "true"\n';

/** A request with an Idempotency-Key (`key` undefined: none); `body` a string is sent as it is. */
async function submit(server: TestServer, path: string, key: string | undefined, body: unknown = {}, credential?: Credential): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...credential };
  if (key !== undefined) headers['idempotency-key'] = key;
  return answerOf(await checkedFetch(`${server.base}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) }));
}

async function runIds(server: TestServer, name: string, credential?: Credential): Promise<string[]> {
  const answer = await answerOf(await checkedFetch(`${server.base}/dag-runs/${name}`, { headers: { ...credential } }));
  assert.equal(answer.status, 200, answer.text);
  return answer.body.dagRuns.map((run: any) => run.dagRunId).sort();
}

describe('idempotent submits', () => {
  let server: TestServer;
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'troupe-idem-'));
    server = await startTestServer('uws');
    for (const name of ['idem-a', 'idem-b', 'idem-q']) await server.writeDag(name, QUICK);
  });
  after(async () => {
    // A start still waiting at the gate (a failed test) is let through before the server stops.
    await writeFile(join(scratch, 'gate'), '');
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  test('a repeat gets the first answer (key order and spacing of the body aside) and starts no second run', async () => {
    const first = await submit(server, '/dags/idem-a/start', 'k-repeat', { params: 'X=1', singleton: false });
    assert.equal(first.status, 200, first.text);
    const again = await submit(server, '/dags/idem-a/start', 'k-repeat', '{ "singleton" : false,\n "params":"X=1" }');
    assert.deepEqual([again.status, again.body], [200, first.body]);
    assert.deepEqual(await runIds(server, 'idem-a'), [first.body.dagRunId]);
    // Without a key, or with another, a request acts as always.
    const other = await submit(server, '/dags/idem-a/start', 'k-repeat-2', { params: 'X=1', singleton: false });
    const none = await submit(server, '/dags/idem-a/start', undefined, { params: 'X=1', singleton: false });
    assert.deepEqual([other.status, none.status], [200, 200]);
    assert.equal((await runIds(server, 'idem-a')).length, 3);
  });

  test('the same key with another body, DAG or route is 422 idempotency_mismatch, and acts on none', async () => {
    const first = await submit(server, '/dags/idem-b/start', 'k-mismatch', { params: 'X=1' });
    assert.equal(first.status, 200, first.text);
    for (const [path, body] of [
      ['/dags/idem-b/start', { params: 'X=2' }],
      ['/dags/idem-q/start', { params: 'X=1' }],
      ['/dags/idem-b/enqueue', { params: 'X=1' }],
      ['/dag-runs', { spec: INLINE }],
    ] as const) {
      const answer = await submit(server, path, 'k-mismatch', body);
      assert.equal(answer.status, 422, `${path}: ${answer.text}`);
      assert.equal(answer.body.code, 'idempotency_mismatch');
    }
    assert.deepEqual(await runIds(server, 'idem-b'), [first.body.dagRunId]);
    assert.deepEqual(await runIds(server, 'idem-q'), []);
  });

  test('POST /dags/{fileName}/enqueue, /dag-runs and /dag-runs/enqueue repeat their first answer', async () => {
    const queued = await submit(server, '/dags/idem-q/enqueue', 'k-enqueue', {});
    assert.equal(queued.status, 200, queued.text);
    const queuedAgain = await submit(server, '/dags/idem-q/enqueue', 'k-enqueue', {});
    assert.deepEqual([queuedAgain.status, queuedAgain.body], [200, queued.body]);
    assert.deepEqual(await runIds(server, 'idem-q'), [queued.body.dagRunId]);
    const inline = await submit(server, '/dag-runs', 'k-inline', { spec: INLINE });
    assert.equal(inline.status, 200, inline.text);
    assert.deepEqual((await submit(server, '/dag-runs', 'k-inline', { spec: INLINE })).body, inline.body);
    // An inline enqueue is refused while its DAG runs as many runs as it may (maxActiveRuns 1).
    await server.waitForRun('idem-inline', inline.body.dagRunId);
    const inlineQueued = await submit(server, '/dag-runs/enqueue', 'k-inline-queued', { spec: INLINE });
    assert.equal(inlineQueued.status, 200, inlineQueued.text);
    assert.deepEqual((await submit(server, '/dag-runs/enqueue', 'k-inline-queued', { spec: INLINE })).body, inlineQueued.body);
    assert.deepEqual(await runIds(server, 'idem-inline'), [inline.body.dagRunId, inlineQueued.body.dagRunId].sort());
  });

  test('a refusal by the route is repeated too; the key of a request that acted on nothing stays its own', async () => {
    const missing = await submit(server, '/dags/idem-later/start', 'k-refused', {});
    assert.equal(missing.status, 404, missing.text);
    await server.writeDag('idem-later', QUICK);
    assert.deepEqual((await submit(server, '/dags/idem-later/start', 'k-refused', {})).body, missing.body);
    assert.deepEqual(await runIds(server, 'idem-later'), []);
    assert.equal((await submit(server, '/dags/idem-later/start', 'k-refused-2', {})).status, 200);
  });

  // Without idempotency both requests wait at the gate: the timeout makes that a failure, not a hang.
  test('a repeat sent while the first is being answered is 409 idempotency_in_progress; one run starts', { timeout: 60_000 }, async () => {
    // The start waits for its param, whose command waits for the gate: whichever request came
    // first is still being answered when the other is, whatever the timing.
    const gate = join(scratch, 'gate');
    await server.writeDag('idem-gate', `params:\n  - GATE: "\`while [ ! -e ${gate} ]; do sleep 0.02; done; echo open\`"\n${QUICK}`);
    const sent = [0, 1].map((index) => submit(server, '/dags/idem-gate/start', 'k-flight', {}).then((answer) => ({ index, answer })));
    const early = await Promise.race(sent);
    assert.equal(early.answer.status, 409, early.answer.text);
    assert.equal(early.answer.body.code, 'idempotency_in_progress');
    const otherBody = await submit(server, '/dags/idem-gate/start', 'k-flight', { params: 'GATE=x' });
    assert.deepEqual([otherBody.status, otherBody.body.code], [422, 'idempotency_mismatch']);
    await writeFile(gate, '');
    const late = await sent[1 - early.index];
    assert.equal(late.answer.status, 200, late.answer.text);
    assert.deepEqual(await runIds(server, 'idem-gate'), [late.answer.body.dagRunId]);
    assert.deepEqual((await submit(server, '/dags/idem-gate/start', 'k-flight', {})).body, late.answer.body);
  });
});

describeOnCarriers('the Idempotency-Key header', (server) => {
  test('1 to 255 printable ASCII characters, spaces inside; else 400 bad_request naming the header', async () => {
    await server.writeDag('idem-header', QUICK);
    for (const key of ['', 'x'.repeat(256), 'a\tb', 'caf\u00e9-1']) {
      const answer = await submit(server, '/dags/idem-header/start', key, {});
      assert.equal(answer.status, 400, `${JSON.stringify(key)}: ${answer.text}`);
      assert.equal(answer.body.code, 'bad_request');
      assert.match(answer.body.message, /Idempotency-Key/);
    }
    assert.deepEqual(await runIds(server, 'idem-header'), []);
    for (const key of ['x'.repeat(255), 'a b ~!', '1']) assert.equal((await submit(server, '/dags/idem-header/start', key, {})).status, 200, key);
  });
});

describe('idempotency keys per caller', () => {
  const PASSWORD = 'idempotency-password-1';
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node', { auth: { mode: 'builtin', admin: { username: 'idem-admin', password: PASSWORD } } });
    await server.writeDag('idem-users', QUICK);
  });
  after(() => server.close());

  test('the same key from two users acts twice; a user repeats their own answer however they sign in', async () => {
    const admin = bearer(await signIn(server, 'idem-admin', PASSWORD));
    for (const username of ['idem-ann', 'idem-bob']) {
      const created = await submit(server, '/users', undefined, { username, password: PASSWORD, role: 'operator' }, admin);
      assert.equal(created.status, 201, created.text);
    }
    const ann = bearer(await signIn(server, 'idem-ann', PASSWORD));
    const bob = bearer(await signIn(server, 'idem-bob', PASSWORD));
    const byAnn = await submit(server, '/dags/idem-users/start', 'shared-key', {}, ann);
    const byBob = await submit(server, '/dags/idem-users/start', 'shared-key', {}, bob);
    assert.deepEqual([byAnn.status, byBob.status], [200, 200]);
    assert.notEqual(byAnn.body.dagRunId, byBob.body.dagRunId);
    assert.deepEqual((await submit(server, '/dags/idem-users/start', 'shared-key', {}, basic('idem-ann', PASSWORD))).body, byAnn.body);
    const key = await submit(server, '/api-keys', undefined, { name: 'idem-key', role: 'operator' }, admin);
    const byKey = await submit(server, '/dags/idem-users/start', 'shared-key', {}, bearer(key.body.key));
    assert.equal(byKey.status, 200);
    assert.deepEqual(await runIds(server, 'idem-users', admin), [byAnn.body.dagRunId, byBob.body.dagRunId, byKey.body.dagRunId].sort());
  });
});

describe('idempotent answers over time', () => {
  test('kept across a restart of the server on the same home', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-idem-home-'));
    const first = await startTestServer('uws', { home });
    let second: TestServer | undefined;
    try {
      await first.writeDag('idem-restart', QUICK);
      const answer = await submit(first, '/dags/idem-restart/start', 'k-restart', {});
      assert.equal(answer.status, 200, answer.text);
      await first.waitForRun('idem-restart', answer.body.dagRunId);
      await first.troupe.close();
      second = await startTestServer('uws', { home });
      assert.deepEqual((await submit(second, '/dags/idem-restart/start', 'k-restart', {})).body, answer.body);
      assert.deepEqual(await runIds(second, 'idem-restart'), [answer.body.dagRunId]);
    } finally {
      await (second ?? first).close();
      await rm(home, { recursive: true, force: true });
    }
  });

  test('a server-side failure (5xx) is not kept: the key acts again', { timeout: 60_000 }, async (t) => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-idem-home-'));
    const gate = join(home, 'gate');
    // Without idempotency both wait at the gate until the timeout: it opens then, so the server can stop.
    t.after(() => writeFile(gate, '').catch(() => undefined));
    const first = await startTestServer('uws', { home });
    let second: TestServer | undefined;
    try {
      await first.writeDag('idem-fail', `params:\n  - GATE: "\`while [ ! -e ${gate} ]; do sleep 0.02; done; echo open\`"\n${QUICK}`);
      // One of the two is held at the gate (the other is 409) while the server starts to stop: the
      // start is then refused with the documented 500.
      const sent = [0, 1].map(() => submit(first, '/dags/idem-fail/start', 'k-fail', {}));
      assert.equal((await Promise.race(sent)).status, 409);
      await first.troupe.engine.drain(0);
      await writeFile(gate, '');
      const statuses = (await Promise.all(sent)).map((answer) => [answer.status, answer.body.code]).sort();
      assert.deepEqual(statuses, [[409, 'idempotency_in_progress'], [500, 'internal_error']]);
      await first.troupe.close();
      second = await startTestServer('uws', { home });
      const again = await submit(second, '/dags/idem-fail/start', 'k-fail', {});
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(await runIds(second, 'idem-fail'), [again.body.dagRunId]);
    } finally {
      await (second ?? first).close();
      await rm(home, { recursive: true, force: true });
    }
  });

  test('a key used again after 24 hours acts again', async () => {
    const clock = new ManualClock(Date.now());
    const server = await startTestServer('uws', { clock });
    try {
      await server.writeDag('idem-day', QUICK);
      const first = await submit(server, '/dags/idem-day/start', 'k-day', {});
      clock.advanceTo(clock.now() + 24 * 3_600_000 - 1);
      assert.deepEqual((await submit(server, '/dags/idem-day/start', 'k-day', {})).body, first.body);
      clock.advanceTo(clock.now() + 2);
      const later = await submit(server, '/dags/idem-day/start', 'k-day', { params: 'other=body' });
      assert.equal(later.status, 200, later.text);
      assert.deepEqual(await runIds(server, 'idem-day'), [first.body.dagRunId, later.body.dagRunId].sort());
    } finally {
      await server.close();
    }
  });
});

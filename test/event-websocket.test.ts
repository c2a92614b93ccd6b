// GET /events/ws: the event stream over WebSocket, on both carriers, driven by the `ws` client as
// any program would: subscribe messages, one JSON message per event, resubscription, resume, errors,
// who may open a socket, and sockets closed when the server stops.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { exchange } from './raw-http.ts';
import { answerOf, checkedFetch, checkRaw, describeOnCarriers, startTestServer, type TestServer } from './helpers.ts';
import { bearer, send, signIn } from './auth-support.ts';

const TWO_STEPS = 'steps:\n  - name: first\n    command: echo one\n  - name: second\n    command: echo two\n    depends: [first]\n';
const ONE_STEP = 'steps:\n  - name: only\n    command: "true"\n';

/** A socket and every message it got, parsed. */
class Client {
  readonly messages: any[] = [];
  closed: { code: number; reason: string } | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()));
      this.wake();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static open(server: TestServer, query = '', headers: Record<string, string> = {}): Promise<Client> {
    const socket = new WebSocket(`${server.base.replace(/^http/, 'ws')}/events/ws${query}`, { headers });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new Client(socket)));
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => { body += chunk.toString(); });
        response.on('end', () => reject(Object.assign(new Error(`refused: ${response.statusCode}`), { status: response.statusCode, body: JSON.parse(body) })));
      });
      socket.once('error', reject);
    });
  }

  subscribe(fields: Record<string, unknown>): void {
    this.socket.send(JSON.stringify({ subscribe: fields }));
  }

  /** Waits until a message after the first `from` satisfies `found`; gives up (a guard, not an assertion) after 20 s. */
  async next(found: (message: any) => boolean, from = 0): Promise<any> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const message = this.messages.slice(from).find(found);
      if (message) return message;
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) before the message came; got ${JSON.stringify(this.messages)}`);
      if (Date.now() > deadline) throw new Error(`no such message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const wake = () => resolve();
        this.waiters.add(wake);
        setTimeout(() => { this.waiters.delete(wake); resolve(); }, 200);
      });
    }
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    return new Promise((resolve) => {
      if (this.closed) resolve(this.closed);
      else this.socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
  }

  close(): void {
    this.socket.terminate();
  }

  private wake(): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }
}

const finalOf = (dagRunId: string) => (message: any) => message.dagRunId === dagRunId && message.type === 'run.succeeded';

async function start(server: TestServer, name: string): Promise<string> {
  const started = await server.call('POST', `/dags/${name}/start`, {});
  assert.equal(started.status, 200, started.text);
  return started.body.dagRunId;
}

/** Refused upgrades: the HTTP status and error document the client got. */
async function refusal(opening: Promise<Client>): Promise<{ status: number; body: any }> {
  try {
    (await opening).close();
  } catch (error) {
    const { status, body } = error as { status?: number; body?: any };
    if (status !== undefined) return { status, body };
    throw error;
  }
  throw new Error('the socket opened');
}

describeOnCarriers('event stream over WebSocket', (server, carrier) => {
  const two = `ws-two-${carrier}`;
  const one = `ws-one-${carrier}`;
  let runId = '';
  let runEvents: any[] = [];

  test('a subscriber gets a run\'s events in order, one JSON message each, numbered upward', async () => {
    await server.writeDag(two, TWO_STEPS);
    await server.writeDag(one, ONE_STEP);
    const client = await Client.open(server);
    client.subscribe({ dagName: two, types: ['run.*', 'step.*'] });
    runId = await start(server, two);
    await client.next(finalOf(runId));
    runEvents = client.messages;
    assert.deepEqual(runEvents.map((event) => [event.type, event.stepName ?? '']), [
      ['run.running', ''], ['step.running', 'first'], ['step.succeeded', 'first'],
      ['step.running', 'second'], ['step.succeeded', 'second'], ['run.succeeded', ''],
    ]);
    assert.ok(runEvents.every((event) => event.name === two && event.dagRunId === runId));
    const seqs = runEvents.map((event) => event.seq);
    assert.ok(seqs.every((seq, index) => Number.isSafeInteger(seq) && (index === 0 || seq > seqs[index - 1])), `seqs: ${seqs}`);
    client.close();
  });

  test('filters: dagName and types (run.* takes every run event) leave out everything else', async () => {
    const client = await Client.open(server);
    const silent = await Client.open(server);
    client.subscribe({ dagName: [one], types: ['run.*'] });
    const other = await start(server, two);
    await server.waitForRun(two, other);
    const mine = await start(server, one);
    await client.next(finalOf(mine));
    assert.deepEqual(client.messages.map((event) => [event.type, event.name, event.dagRunId]), [['run.running', one, mine], ['run.succeeded', one, mine]]);
    // Until its first subscribe a socket gets nothing: the reset it asks for now is its first message.
    silent.subscribe({ since: 1e12 });
    await silent.next((message) => 'reset' in message);
    assert.ok('reset' in silent.messages[0], JSON.stringify(silent.messages[0]));
    client.close();
    silent.close();
  });

  test('a new subscribe on the same socket replaces the subscription', async () => {
    const client = await Client.open(server);
    client.subscribe({ dagName: two, types: 'step.succeeded' });
    const first = await start(server, two);
    await client.next((event) => event.dagRunId === first && event.stepName === 'second');
    const switched = client.messages.length;
    client.subscribe({ dagName: one, types: 'run.succeeded' });
    // Once a run of `one` is heard, the new subscription is in place: the run of `two` after it is not heard.
    const marker = await start(server, one);
    await client.next(finalOf(marker), switched);
    const unheard = await start(server, two);
    await server.waitForRun(two, unheard);
    const last = await start(server, one);
    await client.next(finalOf(last), switched);
    assert.deepEqual(client.messages.slice(switched).map((event) => [event.type, event.dagRunId]), [['run.succeeded', marker], ['run.succeeded', last]]);
    assert.ok(client.messages.slice(0, switched).every((event) => event.type === 'step.succeeded' && event.dagRunId === first));
    client.close();
  });

  test('since resumes from the store: the same events with the same numbers', async () => {
    const client = await Client.open(server);
    client.subscribe({ dagRunId: runId, since: 0 });
    await client.next(finalOf(runId));
    assert.deepEqual(client.messages, runEvents);
    const later = await Client.open(server);
    later.subscribe({ dagRunId: runId, since: runEvents[2].seq });
    await later.next(finalOf(runId));
    assert.deepEqual(later.messages, runEvents.slice(3));
    client.close();
    later.close();
  });

  test('a resume point past the newest event gets a reset', async () => {
    const client = await Client.open(server);
    client.subscribe({ since: 1e12 });
    const reset = await client.next((message) => 'reset' in message);
    assert.deepEqual(Object.keys(reset.reset).sort(), ['head', 'oldestSeq']);
    assert.ok(reset.reset.head >= runEvents.at(-1).seq);
    client.close();
  });

  test('a bad message gets an error message and the socket keeps working', async () => {
    const client = await Client.open(server);
    const bad = ['not json', '[1]', JSON.stringify({ unsubscribe: {} }), JSON.stringify({ subscribe: { colour: 'red' } }),
      JSON.stringify({ subscribe: { dagName: 'no/slash' } }), JSON.stringify({ subscribe: { types: 'run.nope' } }),
      JSON.stringify({ subscribe: { since: -1 } }), JSON.stringify({ subscribe: 'all' })];
    for (const text of bad) client.socket.send(text);
    const errors = await client.next(() => client.messages.length === bad.length).then(() => client.messages);
    for (const message of errors) {
      assert.deepEqual(Object.keys(message), ['error']);
      assert.equal(message.error.code, 'bad_request');
      assert.equal(typeof message.error.message, 'string');
    }
    assert.match(errors[3].error.message, /unknown field "colour"/);
    assert.match(errors[5].error.message, /"run.nope" is not an event type/);
    client.subscribe({ dagRunId: runId, since: 0 });
    await client.next(finalOf(runId), bad.length);
    assert.deepEqual(client.messages.slice(bad.length), runEvents);
    client.close();
  });

  test('a page of another origin may not open one; the server\'s own origin may', async () => {
    await assert.rejects(Client.open(server, '', { origin: 'https://evil.example' }), (error: any) => error.status === 403 && error.body.code === 'forbidden');
    const own = await Client.open(server, '', { origin: new URL(server.base).origin });
    own.close();
  });

  test('a plain GET is answered 400: the route speaks WebSocket; other requests asking to upgrade are served as plain ones', async () => {
    const answer = await answerOf(await checkedFetch(`${server.base}/events/ws`));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 'bad_request');
    const port = server.troupe.server.port;
    for (const upgrade of ['Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA',
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13']) {
      const { responses } = await exchange(port, `GET /api/v2/health HTTP/1.1\r\nHost: t\r\n${upgrade}\r\n\r\n`, { expect: 1 });
      await checkRaw('GET', '/health', responses[0]);
      assert.equal(responses[0].status, 200, upgrade);
      assert.equal(JSON.parse(responses[0].body).status, 'healthy');
    }
  });
});

for (const carrier of ['uws', 'node'] as const) {
  describe(`event WebSocket on a server of its own on ${carrier}`, () => {
    test('no credential is 401 with no upgrade; a token in the query, a viewer\'s session and an API key are served; a cookie from another origin is refused', async () => {
      const password = 'ws-password-1';
      const server = await startTestServer(carrier, { auth: { mode: 'builtin', admin: { username: 'ws-admin', password } } });
      try {
        const admin = bearer(await signIn(server, 'ws-admin', password));
        assert.equal((await send(server, 'POST', '/users', admin, { username: 'ws-viewer', password, role: 'viewer' })).status, 201);
        const viewer = await signIn(server, 'ws-viewer', password);
        const key = (await send(server, 'POST', '/api-keys', admin, { name: 'ws-key', role: 'viewer' })).body.key as string;

        const none = await refusal(Client.open(server));
        assert.equal(none.status, 401);
        assert.equal(none.body.code, 'unauthorized');
        assert.equal((await refusal(Client.open(server, '?token=wrong'))).status, 401);

        // Served: each gets the reset a resume point past the head answers, so the socket is open and subscribed.
        const served = async (query: string, headers: Record<string, string> = {}) => {
          const client = await Client.open(server, query, headers);
          client.subscribe({ since: 1e12 });
          await client.next((message) => 'reset' in message);
          client.close();
        };
        // Several in a row: a socket the carrier ended just after its handshake would show here as 1006.
        for (let round = 0; round < 5; round++) await served(`?token=${encodeURIComponent(viewer)}`);
        await served(`?token=${encodeURIComponent(key)}`);
        await served('', { authorization: `Bearer ${viewer}` });
        await served('', { cookie: `troupe_session=${viewer}` });
        await served('', { cookie: `troupe_session=${viewer}`, origin: new URL(server.base).origin });
        // A foreign page holding a token is whoever holds it; with only the browser's cookie it is refused.
        await served(`?token=${encodeURIComponent(key)}`, { origin: 'https://evil.example' });
        const foreign = await refusal(Client.open(server, '', { cookie: `troupe_session=${viewer}`, origin: 'https://evil.example' }));
        assert.deepEqual([foreign.status, foreign.body.code], [403, 'forbidden']);
      } finally {
        await server.close();
      }
    });

    test('a socket whose API key is revoked, or whose user loses the role, gets the error and is closed (1008)', async () => {
      const password = 'ws-password-2';
      const server = await startTestServer(carrier, { eventHeartbeatMs: 100, auth: { mode: 'builtin', admin: { username: 'ws-admin', password } } });
      try {
        const admin = bearer(await signIn(server, 'ws-admin', password));
        const made = (await send(server, 'POST', '/api-keys', admin, { name: 'ws-revoked', role: 'viewer' })).body;
        assert.equal((await send(server, 'POST', '/users', admin, { username: 'ws-demoted', password, role: 'viewer' })).status, 201);
        const user = await send(server, 'GET', '/users', admin);
        const demotedId = user.body.users.find((entry: { username: string }) => entry.username === 'ws-demoted').id;
        const viewer = await signIn(server, 'ws-demoted', password);
        const keyed = await Client.open(server, `?token=${encodeURIComponent(made.key)}`);
        const signed = await Client.open(server, '', { authorization: `Bearer ${viewer}` });
        for (const client of [keyed, signed]) {
          client.subscribe({ since: 1e12 });
          await client.next((message) => 'reset' in message);
        }
        // Still accepted a few checks later.
        await new Promise((resolve) => setTimeout(resolve, 350));
        assert.equal(keyed.closed, undefined);
        assert.equal((await send(server, 'DELETE', `/api-keys/${made.apiKey.id}`, admin)).status, 204);
        await keyed.next(() => keyed.closed !== undefined);
        assert.equal(keyed.closed!.code, 1008);
        assert.equal(keyed.messages.at(-1).error.code, 'unauthorized');
        assert.equal(signed.closed, undefined, 'another client is not touched');
        // The user removed: the signed-in client goes too.
        assert.equal((await send(server, 'DELETE', `/users/${demotedId}`, admin)).status, 204);
        await signed.next(() => signed.closed !== undefined);
        assert.equal(signed.closed!.code, 1008);
        assert.equal(signed.messages.at(-1).error.code, 'unauthorized');
      } finally {
        await server.close();
      }
    });

    test('a client that stops reading for a while, within its backlog, then gets every event in order once it reads again', async () => {
      const server = await startTestServer(carrier, { eventBacklogBytes: 64 * 1024 * 1024 });
      try {
        const client = await Client.open(server);
        client.subscribe({ types: 'dag.*' });
        const probe = await Client.open(server);
        probe.subscribe({ since: 1e12 });
        await probe.next((message) => 'reset' in message);
        probe.close();
        client.socket.pause();
        const at = new Date().toISOString();
        for (let batch = 0; batch < 40; batch++) {
          await server.troupe.runs.appendEvents(Array.from({ length: 2000 }, (_, index) => ({ type: 'dag.updated' as const, name: `ws-held-${batch}-${index}`, at })));
          await new Promise((resolve) => setImmediate(resolve));
        }
        client.socket.resume();
        await client.next((event) => event.name === 'ws-held-39-1999');
        const events = client.messages;
        assert.equal(events.length, 80_000);
        assert.ok(events.every((event, index) => index === 0 || event.seq === events[index - 1].seq + 1), 'in order, none missing');
        assert.equal(client.closed, undefined);
        client.close();
      } finally {
        await server.close();
      }
    });

    test('a client that stops reading is sent `dropped` once past its backlog, then closed with 1008; it got every event up to lastSeq', async () => {
      const server = await startTestServer(carrier, { eventBacklogBytes: 64 * 1024 });
      try {
        const client = await Client.open(server);
        client.subscribe({});
        // Subscribed once a reset asked for on a second socket is heard: both are on the hub then.
        const probe = await Client.open(server);
        probe.subscribe({ since: 1e12 });
        await probe.next((message) => 'reset' in message);
        probe.close();
        client.socket.pause();
        // More than the kernel's socket buffers hold (a few MiB on loopback), in live batches.
        const at = new Date().toISOString();
        for (let batch = 0; batch < 40 && !client.closed; batch++) {
          await server.troupe.runs.appendEvents(Array.from({ length: 2000 }, (_, index) => ({ type: 'dag.updated' as const, name: `ws-flood-${batch}-${index}`, at })));
          await new Promise((resolve) => setImmediate(resolve));
        }
        client.socket.resume();
        const closed = await client.whenClosed();
        assert.deepEqual(closed, { code: 1008, reason: 'too slow: dropped' });
        const last = client.messages.at(-1);
        assert.deepEqual(Object.keys(last), ['dropped']);
        assert.match(last.dropped.reason, /fell more than 65536 bytes behind/);
        const events = client.messages.slice(0, -1);
        assert.ok(events.length > 0 && events.length < 80_000, `${events.length} events before the drop`);
        assert.equal(events.at(-1).seq, last.dropped.lastSeq);
        assert.ok(events.every((event, index) => index === 0 || event.seq === events[index - 1].seq + 1), 'no event missing before the drop');
      } finally {
        await server.close();
      }
    });

    test('open sockets are closed with 1001 when the server stops, without holding the stop', async () => {
      const server = await startTestServer(carrier);
      const idle = await Client.open(server);
      const subscribed = await Client.open(server);
      subscribed.subscribe({});
      await server.close();
      assert.deepEqual(await idle.whenClosed(), { code: 1001, reason: 'server stopping' });
      assert.deepEqual(await subscribed.whenClosed(), { code: 1001, reason: 'server stopping' });
    });
  });
}

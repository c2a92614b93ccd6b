// GET /events: the event log as Server-Sent Events, on the real server over HTTP, both carriers.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkedFetch, describeOnCarriers, startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { SseClient, type SseMessage } from './support/sse-client.ts';

const TWO = 'steps:\n  - name: a\n    command: echo a\n  - name: b\n    command: "false"\n    depends: [a]\n';
const ONE = 'steps:\n  - name: only\n    command: echo one\n';

const isEnd = (dagRunId: string) => (message: SseMessage) => /^run\.(succeeded|failed|aborted|partially_succeeded)$/.test(message.event) && JSON.parse(message.data).dagRunId === dagRunId;
const ended = (dagRunId: string) => (messages: SseMessage[]) => messages.some(isEnd(dagRunId));
const typesOf = (messages: SseMessage[]) => messages.filter((message) => message.event !== 'message').map((message) => {
  const event = JSON.parse(message.data);
  return event.stepName ? `${event.type}:${event.stepName}` : event.type;
});

describeOnCarriers('the event stream', (server) => {
  const open = (query = '', headers: Record<string, string> = {}) => SseClient.open(`${server.base}/events${query}`, headers);
  const start = async (name: string, dagRunId?: string) => {
    const started = await server.call('POST', `/dags/${name}/start`, dagRunId ? { dagRunId } : {});
    assert.equal(started.status, 200, started.text);
    return started.body.dagRunId as string;
  };

  test('every transition of a run, numbered in order, told once its state is stored', async () => {
    await server.writeDag('ev-two', TWO);
    const stream = await open('?dagName=ev-two&types=run.*,step.*');
    after(() => stream.close());
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const dagRunId = await start('ev-two');
    const messages = await stream.until(ended(dagRunId));
    assert.equal(messages[0].retry! > 0, true, 'the first message tells the browser how soon to reconnect');
    const events = messages.slice(1);
    assert.deepEqual(typesOf(events), ['run.running', 'step.running:a', 'step.succeeded:a', 'step.running:b', 'step.failed:b', 'run.failed']);
    for (const [index, message] of events.entries()) {
      const event = JSON.parse(message.data);
      assert.equal(message.id, String(event.seq), 'id: is the event number');
      assert.equal(event.dagRunId, dagRunId);
      if (index > 0) assert.ok(event.seq > JSON.parse(events[index - 1].data).seq, 'numbers only grow');
    }
    // The run's end was stored before it was told.
    const run = await server.call('GET', `/dag-runs/ev-two/${dagRunId}`);
    assert.equal(run.body.dagRun.status, 2);
  });

  test('filters: DAG names, one run, types and kinds', async () => {
    await server.writeDag('ev-f1', ONE);
    await server.writeDag('ev-f2', ONE);
    await server.writeDag('ev-f3', ONE);
    const byNames = await open('?dagName=ev-f1,ev-f2');
    const byRun = await open('?dagRunId=ev-chosen-run');
    const byTypes = await open('?dagName=ev-f1,ev-f2,ev-f3&types=run.*,step.succeeded');
    after(() => { byNames.close(); byRun.close(); byTypes.close(); });
    const first = await start('ev-f1');
    const chosen = await start('ev-f2', 'ev-chosen-run');
    const third = await start('ev-f3');
    await byNames.until((messages) => ended(first)(messages) && ended(chosen)(messages));
    await byRun.until(ended(chosen));
    await byTypes.until((messages) => [first, chosen, third].every((id) => ended(id)(messages)));
    assert.deepEqual(new Set(byNames.events().map((event) => event.name)), new Set(['ev-f1', 'ev-f2']));
    assert.ok(byRun.events().every((event) => event.dagRunId === 'ev-chosen-run'));
    assert.deepEqual(typesOf(byRun.messages), ['run.running', 'step.running:only', 'step.succeeded:only', 'run.succeeded']);
    for (const id of [first, chosen, third]) {
      assert.deepEqual(byTypes.events().filter((event) => event.dagRunId === id).map((event) => event.type), ['run.running', 'step.succeeded', 'run.succeeded']);
    }
  });

  test('a client resumes after the last event it saw: Last-Event-ID, or since; no gap, no repeat', async () => {
    await server.writeDag('ev-resume', TWO);
    const first = await open('?dagName=ev-resume');
    after(() => first.close());
    const dagRunId = await start('ev-resume');
    // Up to the run's end, in every stream: the watcher's dag.created for the file written above
    // may come after it, in the same read or not.
    const upToEnd = (messages: SseMessage[]) => messages.slice(1, messages.findIndex(isEnd(dagRunId)) + 1);
    const all = upToEnd(await first.until(ended(dagRunId)));
    const cut = all[1].id!;
    const byHeader = await open('?dagName=ev-resume', { 'last-event-id': cut });
    const byQuery = await open(`?dagName=ev-resume&since=${cut}`);
    // A browser reconnects with the URL it opened: the header it adds is where it stopped.
    const both = await open(`?dagName=ev-resume&since=0`, { 'last-event-id': cut });
    after(() => { byHeader.close(); byQuery.close(); both.close(); });
    for (const stream of [byHeader, byQuery, both]) {
      const resumed = upToEnd(await stream.until(ended(dagRunId)));
      assert.deepEqual(resumed.map((message) => message.id), all.slice(2).map((message) => message.id));
    }
  });

  test('what cannot be followed is refused with the error document', async () => {
    for (const query of ['?types=run.bogus', '?since=-1', '?since=abc', '?dagName=../x', '?dagName=a,,b', '?dagRunId=%20bad%20id%20']) {
      const stream = await open(query);
      assert.equal(stream.status, 400, query);
      assert.equal(JSON.parse(stream.errorBody!).code, 'bad_request', query);
    }
    const badHeader = await open('', { 'last-event-id': 'x1' });
    assert.equal(badHeader.status, 400);
  });
});

describe('the event stream past what is kept', () => {
  let server: TestServer;
  after(() => server?.close());

  test('a resume point older than the kept events gets one reset, then the kept events, then the live ones', async () => {
    server = await startTestServer('uws', { eventMaxCount: 2 });
    // Created through the API, so that its event (the first) is committed before the run begins.
    assert.equal((await server.call('POST', '/dags', { name: 'ev-kept', spec: ONE })).status, 201);
    const done = await server.startAndWait('ev-kept');
    await server.troupe.eventRetention.sweep();
    const stream = await SseClient.open(`${server.base}/events?since=0`);
    after(() => stream.close());
    const messages = await stream.until((list) => list.length >= 4);
    assert.equal(messages[1].event, 'reset');
    const reset = JSON.parse(messages[1].data);
    assert.equal(reset.oldestSeq, 4, 'two of five kept');
    assert.equal(reset.head, 5);
    assert.equal(messages[1].id, '3', 'a reconnect resumes where the kept events begin');
    assert.deepEqual(messages.slice(2).map((message) => message.event), ['step.succeeded', 'run.succeeded']);
    assert.equal(JSON.parse(messages[3].data).dagRunId, done.dagRunId);
    const next = await server.call('POST', '/dags/ev-kept/start', {});
    await stream.until(ended(next.body.dagRunId));
    assert.equal(stream.messages.filter((message) => message.event === 'reset').length, 1);
    // A resume point past anything the server numbered (another server's) is a reset too.
    const future = await SseClient.open(`${server.base}/events?since=999999`);
    after(() => future.close());
    const [, first] = await future.until((list) => list.length >= 2);
    assert.equal(first.event, 'reset');
  });
});

describe('event stream heartbeats and slow clients', () => {
  let server: TestServer;
  after(() => server?.close());

  test('an idle stream gets comment lines', async () => {
    server = await startTestServer('uws', { eventHeartbeatMs: 100, eventBacklogBytes: 4096 });
    const idle = await SseClient.open(`${server.base}/events?dagName=ev-never`);
    after(() => idle.close());
    const deadline = Date.now() + 10_000;
    while (idle.comments < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(idle.comments >= 2, `comments: ${idle.comments}`);
  });

  test('a client that stops reading is dropped with a message saying why; the others and the API go on', async () => {
    // Long step names make large events: the connection's buffers fill with a few runs.
    const name = (index: number) => `s${index}_${'x'.repeat(9000)}`;
    const steps = Array.from({ length: 60 }, (_, index) => `  - name: ${name(index)}\n    command: "true"\n`).join('');
    await server.writeDag('ev-wide', `maxActiveSteps: 8\nsteps:\n${steps}`);
    const reader = await SseClient.open(`${server.base}/events?dagName=ev-wide`);
    after(() => reader.close());
    const url = new URL(`${server.base}/events?dagName=ev-wide`);
    const stalled = connect(Number(url.port), url.hostname);
    let received = '';
    let closed = false;
    stalled.on('data', (chunk) => { received += chunk.toString(); });
    stalled.on('close', () => { closed = true; });
    stalled.on('error', () => undefined);
    stalled.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    await new Promise((resolve) => stalled.once('data', resolve));
    stalled.pause();
    const runs: string[] = [];
    for (let round = 0; round < 12 && server.troupe.eventHub.counts.dropped === 0; round++) {
      runs.push((await server.startAndWait('ev-wide')).dagRunId);
      assert.equal((await server.call('GET', '/health')).status, 200);
    }
    await reader.until((messages) => runs.every((id) => ended(id)(messages)), 60_000);
    assert.equal(reader.events().filter((event) => event.type === 'step.succeeded').length, runs.length * 60, 'the reading client got every event');
    assert.equal(server.troupe.eventHub.counts.dropped, 1, 'the stalled client was dropped');
    // Read at once: uWS closes a connection that takes nothing for 10 s, whatever it still holds.
    stalled.resume();
    const deadline = Date.now() + 15_000;
    while (!closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(closed, 'the stalled client was disconnected');
    const dropped = /event: dropped\r?\ndata: (.*)\r?\n/.exec(received.replace(/\r\n[0-9a-f]+\r\n/g, ''));
    assert.ok(dropped, 'its last message says why');
    const why = JSON.parse(dropped[1]);
    assert.match(why.reason, /fell more than 4096 bytes behind/);
    assert.ok(why.lastSeq > 0);
  });
});

describe('definition and queue changes on the event stream', () => {
  let server: TestServer;
  after(() => server?.close());

  test('a DAG created, edited, suspended, resumed, renamed and deleted; a queue limit changed', async () => {
    server = await startTestServer('node', { queues: [{ name: 'ev-lane', maxConcurrency: 1 }] });
    const stream = await SseClient.open(`${server.base}/events?types=dag.*,queue.*`);
    after(() => stream.close());
    const { call } = server;
    assert.equal((await call('POST', '/dags', { name: 'ev-life', spec: ONE })).status, 201);
    assert.equal((await call('PUT', '/dags/ev-life/spec', { spec: TWO })).status, 200);
    assert.equal((await call('POST', '/dags/ev-life/suspend', { suspend: true })).status, 200);
    assert.equal((await call('POST', '/dags/ev-life/suspend', { suspend: false })).status, 200);
    assert.equal((await call('POST', '/dags/ev-life/rename', { newFileName: 'ev-life2' })).status, 200);
    assert.equal((await call('DELETE', '/dags/ev-life2')).status, 204);
    assert.equal((await call('PATCH', '/queues/ev-lane', { maxConcurrency: 3 })).status, 200);
    const messages = await stream.until((list) => list.some((message) => message.event === 'queue.limit_changed'));
    const told = stream.events().map((event) => [event.type, event.name ?? event.queue, event.newName ?? event.maxConcurrency ?? '']);
    assert.deepEqual(told, [
      ['dag.created', 'ev-life', ''], ['dag.updated', 'ev-life', ''], ['dag.suspended', 'ev-life', ''], ['dag.resumed', 'ev-life', ''],
      ['dag.renamed', 'ev-life', 'ev-life2'], ['dag.deleted', 'ev-life2', ''], ['queue.limit_changed', 'ev-lane', 3],
    ]);
    assert.ok(messages.slice(1).every((message, index, list) => index === 0 || Number(message.id) > Number(list[index - 1].id)));
  });

  test('a DAG file created, edited and removed by hand is told too; what the API wrote, or a file written again unchanged, is told once', async () => {
    const stream = await SseClient.open(`${server.base}/events?types=dag.*`);
    after(() => stream.close());
    const told = (type: string) => stream.until((list) => list.some((message) => message.event === type && message.data.includes('"ev-hand"')));
    assert.equal((await server.call('POST', '/dags', { name: 'ev-api', spec: ONE })).status, 201);
    await server.writeDag('ev-hand', ONE);
    await told('dag.created');
    // The same text again: the watcher notices, and nothing changed.
    await server.writeDag('ev-hand', ONE);
    await sleep(200);
    await server.writeDag('ev-hand', TWO);
    await told('dag.updated');
    await rm(join(server.home, 'dags', 'ev-hand.yaml'));
    await told('dag.deleted');
    assert.deepEqual(stream.events().map((event) => [event.type, event.name]), [
      ['dag.created', 'ev-api'], ['dag.created', 'ev-hand'], ['dag.updated', 'ev-hand'], ['dag.deleted', 'ev-hand'],
    ]);
  });
});

describe('the event stream with authentication on', () => {
  let server: TestServer;
  after(() => server?.close());
  const PASSWORD = 'stream-password-1';

  test('401 without credentials; a viewer follows with a Bearer token, a ?token= API key, or the session cookie', async () => {
    server = await startTestServer('uws', { auth: { mode: 'builtin', admin: { username: 'ev-admin', password: PASSWORD } } });
    const login = async (username: string) => (await (await checkedFetch(`${server.base}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: PASSWORD }),
    })).json() as { token: string }).token;
    const admin = { authorization: `Bearer ${await login('ev-admin')}` };
    const made = await checkedFetch(`${server.base}/users`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ev-viewer', password: PASSWORD, role: 'viewer' }) });
    assert.equal(made.status, 201);
    const viewer = await login('ev-viewer');
    const key = await (await checkedFetch(`${server.base}/api-keys`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ev-key', role: 'viewer' }) })).json() as { key: string };
    const none = await SseClient.open(`${server.base}/events`);
    assert.equal(none.status, 401);
    assert.equal(JSON.parse(none.errorBody!).code, 'unauthorized');
    assert.equal((await SseClient.open(`${server.base}/events?token=not-a-token`)).status, 401);
    const streams = [
      await SseClient.open(`${server.base}/events?dagName=ev-auth`, { authorization: `Bearer ${viewer}` }),
      await SseClient.open(`${server.base}/events?dagName=ev-auth&token=${encodeURIComponent(key.key)}`),
      await SseClient.open(`${server.base}/events?dagName=ev-auth`, { cookie: `troupe_session=${viewer}` }),
    ];
    after(() => { for (const stream of streams) stream.close(); });
    for (const stream of streams) assert.equal(stream.status, 200);
    await server.writeDag('ev-auth', ONE);
    const started = await checkedFetch(`${server.base}/dags/ev-auth/start`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
    const { dagRunId } = await started.json() as { dagRunId: string };
    for (const stream of streams) await stream.until(ended(dagRunId));
  });

  test('a stream whose user is removed gets the error document as its last message, and ends; the event stream and a step\'s log stream alike', async () => {
    const own = await startTestServer('node', { eventHeartbeatMs: 100, auth: { mode: 'builtin', admin: { username: 'ev-admin', password: PASSWORD } } });
    after(() => own.close());
    const login = async (username: string) => (await (await checkedFetch(`${own.base}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: PASSWORD }),
    })).json() as { token: string }).token;
    const admin = { authorization: `Bearer ${await login('ev-admin')}`, 'content-type': 'application/json' };
    const made = await (await checkedFetch(`${own.base}/users`, { method: 'POST', headers: admin, body: JSON.stringify({ username: 'ev-leaving', password: PASSWORD, role: 'viewer' }) })).json() as { user: { id: string } };
    const viewer = { cookie: `troupe_session=${await login('ev-leaving')}` };
    await own.writeDag('ev-long', 'steps:\n  - name: wait\n    command: sleep 30\n');
    const started = await (await checkedFetch(`${own.base}/dags/ev-long/start`, { method: 'POST', headers: admin, body: '{}' })).json() as { dagRunId: string };
    const events = await SseClient.open(`${own.base}/events`, viewer);
    const log = await SseClient.open(`${own.base}/dag-runs/ev-long/${started.dagRunId}/steps/wait/log/stream`, viewer);
    after(() => { events.close(); log.close(); });
    assert.deepEqual([events.status, log.status], [200, 200]);
    // Checked again every 100 ms, and still accepted.
    await sleep(350);
    assert.deepEqual([events.ended, log.ended], [false, false]);
    assert.equal((await checkedFetch(`${own.base}/users/${made.user.id}`, { method: 'DELETE', headers: admin })).status, 204);
    for (const stream of [events, log]) {
      await waitUntil(async () => stream.ended, 5_000);
      const last = stream.messages.at(-1)!;
      assert.equal(last.event, 'error');
      assert.equal(JSON.parse(last.data).code, 'unauthorized');
    }
    await checkedFetch(`${own.base}/dag-runs/ev-long/${started.dagRunId}/stop`, { method: 'POST', headers: admin, body: '{}' });
  });
});

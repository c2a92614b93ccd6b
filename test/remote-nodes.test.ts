// Remote nodes: requests with `remoteNode` go to the named node with its credentials and come back
// as it answered. Two real troupe servers, plus small HTTP(S) servers that record what reaches them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { resolveConfig } from '../src/config/index.ts';
import type { RemoteNode } from '../src/core/index.ts';
import { answerOf, checkedFetch, HELLO, startTestServer, uncheckedFetch, waitUntil, type TestServer } from './helpers.ts';
import { exited, startCli } from './cli-process.ts';
import { SseClient } from './support/sse-client.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Answers every request with 201 and a JSON body of its own content type, after recording it. */
function recorder(seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(201, { 'content-type': 'application/vnd.recorder+json' });
      res.end('{"recorded":true}');
    });
  };
}

function listening(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function closing(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listening(server);
  await closing(server);
  return port;
}

/** Why a recorder's answer, passed on by A as it came, is kept out of the OpenAPI document check. */
const RECORDER = 'the answer of a recorder standing in for a remote node, which A passes on as it came';

/**
 * A request as any client sends it, with its own headers. Its answer is checked against the OpenAPI
 * document unless `unchecked` says why not.
 */
async function call(base: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; unchecked?: string } = {}) {
  const url = `${base}${path}`;
  const send = (init: RequestInit) => options.unchecked === undefined ? checkedFetch(url, init) : uncheckedFetch(options.unchecked, url, init);
  const response = await send({
    method,
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return answerOf(response);
}

const PASSWORD = 'hunter2-remote-password';
const TOKEN = 'remote-api-token-0123456789';

describe('remote nodes', () => {
  let a: TestServer;
  let b: TestServer;
  let plain: Server;
  let tls: Server;
  let broken: Server;
  const seen: Seen[] = [];
  const tlsSeen: Seen[] = [];

  before(async () => {
    b = await startTestServer('node');
    plain = createServer(recorder(seen));
    const plainPort = await listening(plain);
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], { keySize: 2048, algorithm: 'sha256' });
    tls = createTlsServer({ key: pems.private, cert: pems.cert }, recorder(tlsSeen));
    const tlsPort = await listening(tls);
    // Promises 100 bytes, sends 7 and hangs up.
    broken = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"dags"', () => res.socket!.destroy());
    });
    const brokenPort = await listening(broken);
    const remoteNodes: RemoteNode[] = [
      { name: 'B', apiBaseURL: `${b.base}/` },
      { name: 'basic', apiBaseURL: `http://127.0.0.1:${plainPort}/api/v2`, isBasicAuth: true, basicAuthUsername: 'ops', basicAuthPassword: PASSWORD },
      { name: 'token', apiBaseURL: `http://127.0.0.1:${plainPort}/api/v2`, isAuthToken: true, authToken: TOKEN },
      { name: 'selfsigned', apiBaseURL: `https://127.0.0.1:${tlsPort}/api/v2`, skipTLSVerify: true },
      { name: 'verified', apiBaseURL: `https://127.0.0.1:${tlsPort}/api/v2` },
      { name: 'broken', apiBaseURL: `http://127.0.0.1:${brokenPort}/api/v2` },
      { name: 'gone', apiBaseURL: `http://127.0.0.1:${await closedPort()}/api/v2` },
    ];
    a = await startTestServer('uws', { remoteNodes });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close(), plain && closing(plain), tls && closing(tls), broken && closing(broken)]);
  });

  test('a DAG created on B is listed, searched and read through A with remoteNode=B, and not on A', async () => {
    const name = 'remote_listed';
    assert.equal((await b.call('POST', '/dags', { name, spec: HELLO })).status, 201);
    const listed = await a.call('GET', `/dags?remoteNode=B&name=${name}`);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.dags.map((dag: any) => dag.fileName), [name]);
    // The answer is B's own, byte for byte.
    assert.equal(listed.text, (await b.call('GET', `/dags?name=${name}`)).text);
    assert.match(listed.headers.get('content-type')!, /^application\/json/);
    assert.deepEqual((await a.call('GET', `/dags?name=${name}`)).body.dags, []);
    assert.equal((await a.call('GET', `/dags/${name}?remoteNode=B`)).status, 200);
    assert.equal((await a.call('GET', `/dags/${name}`)).status, 404);
    const tags = await a.call('GET', '/dags/tags?remoteNode=B');
    assert.ok(tags.body.tags.includes('demo'), tags.text);
    const search = await a.call('GET', '/dags/search?q=hello%20dag&remoteNode=B');
    assert.equal(search.status, 200, search.text);
  });

  test('a DAG created through A with remoteNode=B is stored on B', async () => {
    const name = 'remote_created';
    const created = await a.call('POST', `/dags?remoteNode=B`, { name, spec: HELLO });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body, { name });
    assert.equal((await b.call('GET', `/dags/${name}`)).status, 200);
    assert.equal((await a.call('GET', `/dags/${name}`)).status, 404);
    // PUT and DELETE go too.
    const edited = await a.call('PUT', `/dags/${name}/spec?remoteNode=B`, { spec: HELLO.replace('hello dag', 'edited remotely') });
    assert.equal(edited.status, 200, edited.text);
    assert.match((await b.call('GET', `/dags/${name}/spec`)).body.spec, /edited remotely/);
    assert.equal((await a.call('DELETE', `/dags/${name}?remoteNode=B`)).status, 204);
    assert.equal((await b.call('GET', `/dags/${name}`)).status, 404);
  });

  test('a run started through A on B runs on B: its status, nodes and step log read through A', async () => {
    const name = 'remote_run';
    await b.writeDag(name, HELLO);
    const started = await a.call('POST', `/dags/${name}/start?remoteNode=B`, { params: '{"NAME":"from-a"}' });
    assert.equal(started.status, 200, started.text);
    const { dagRunId } = started.body;
    const run = await b.waitForRun(name, dagRunId);
    assert.equal(run.statusLabel, 'succeeded');
    const throughA = await a.call('GET', `/dag-runs/${name}/${dagRunId}?remoteNode=B`);
    assert.equal(throughA.status, 200);
    assert.deepEqual(throughA.body.dagRun.nodes.map((node: any) => node.statusLabel), ['succeeded', 'succeeded']);
    const log = await a.call('GET', `/dag-runs/${name}/${dagRunId}/steps/s1/log?remoteNode=B&tail=5`);
    assert.equal(log.status, 200);
    assert.equal(log.body.content.trim(), 'hello from-a');
    assert.equal((await a.call('GET', `/dag-runs/${name}/${dagRunId}`)).status, 404);
    const runs = await a.call('GET', `/dag-runs?remoteNode=B&name=${name}`);
    assert.deepEqual(runs.body.dagRuns.map((item: any) => item.dagRunId), [dagRunId]);
  });

  test('percent-encoded path segments reach the remote as they were sent', async () => {
    const name = 'remote_spaced';
    await b.writeDag(name, 'steps:\n  - name: say hi/there\n    command: echo spaced\n');
    const run = await b.startAndWait(name);
    assert.equal(run.statusLabel, 'succeeded');
    const log = await a.call('GET', `/dag-runs/${name}/${run.dagRunId}/steps/${encodeURIComponent('say hi/there')}/log?remoteNode=B`);
    assert.equal(log.status, 200, log.text);
    assert.equal(log.body.content.trim(), 'spaced');
  });

  test("a remote's error answer is passed through as it is: status, body and content type", async () => {
    const throughA = await a.call('GET', '/dags/no_such_dag?remoteNode=B');
    const direct = await b.call('GET', '/dags/no_such_dag');
    assert.equal(throughA.status, 404);
    assert.equal(throughA.text, direct.text);
    assert.equal(throughA.headers.get('content-type'), direct.headers.get('content-type'));
    assert.equal(throughA.body.code, 'not_found');
    // A route A does not serve itself is still B's to answer.
    const missing = await a.call('GET', '/workers?remoteNode=B');
    assert.equal(missing.text, (await b.call('GET', '/workers')).text);
  });

  test('HEAD through A gives the headers of the remote GET answer, no body', async () => {
    const head = await checkedFetch(`${a.base}/dags/tags?remoteNode=B`, { method: 'HEAD' });
    const get = await b.call('GET', '/dags/tags');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(get.text)));
    assert.equal(await head.text(), '');
  });

  test('remoteNode=local, an empty remoteNode and the routes that take none are served by A itself', async () => {
    const name = 'remote_local_only';
    await a.writeDag(name, HELLO);
    assert.equal((await a.call('GET', `/dags/${name}?remoteNode=local`)).status, 200);
    assert.equal((await a.call('GET', `/dags/${name}?remoteNode=`)).status, 200);
    assert.equal((await b.call('GET', `/dags/${name}`)).status, 404);
    assert.equal((await a.call('GET', '/health?remoteNode=nowhere')).status, 200);
    const metrics = await a.call('GET', '/metrics?remoteNode=B');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /troupe_info/);
  });

  test('an unknown node is 400 bad_request naming it', async () => {
    const answer = await a.call('GET', '/dags?remoteNode=nowhere');
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 'bad_request');
    assert.match(answer.body.message, /remote node "nowhere" is not configured/);
  });

  test('a node nobody answers at is 502 remote_node_error naming it', async () => {
    const answer = await a.call('GET', '/dags?remoteNode=gone');
    assert.equal(answer.status, 502);
    assert.equal(answer.body.code, 'remote_node_error');
    assert.match(answer.body.message, /remote node "gone" cannot be reached \(ECONNREFUSED\)/);
  });

  test('a node that breaks off its answer is 502 bad_gateway naming it', async () => {
    const answer = await a.call('GET', '/dags?remoteNode=broken');
    assert.equal(answer.status, 502);
    assert.equal(answer.body.code, 'bad_gateway');
    assert.match(answer.body.message, /remote node "broken" broke off its answer/);
  });

  test("basic auth and token: the node's credentials are sent, the client's never, and the request goes as it came", async () => {
    seen.length = 0;
    const basic = await call(a.base, 'POST', '/dags/d1/start?remoteNode=basic&x=1', {
      body: { params: '{"A":"b"}' }, headers: { authorization: 'Bearer client-credential', accept: 'application/json' }, unchecked: RECORDER,
    });
    assert.equal(basic.status, 201);
    assert.equal(basic.headers.get('content-type'), 'application/vnd.recorder+json');
    assert.equal(basic.text, '{"recorded":true}');
    const token = await call(a.base, 'GET', '/dag-runs?remoteNode=token&name=x%20y&status=4', { unchecked: RECORDER });
    assert.equal(token.status, 201);
    assert.equal(seen.length, 2);
    const [first, second] = seen;
    assert.equal(first.method, 'POST');
    assert.equal(first.url, '/api/v2/dags/d1/start?x=1');
    assert.equal(first.headers.authorization, `Basic ${Buffer.from(`ops:${PASSWORD}`).toString('base64')}`);
    assert.equal(first.headers['content-type'], 'application/json');
    assert.equal(first.headers.accept, 'application/json');
    assert.deepEqual(JSON.parse(first.body), { params: '{"A":"b"}' });
    assert.equal(second.method, 'GET');
    assert.equal(second.url, '/api/v2/dag-runs?name=x+y&status=4');
    assert.equal(second.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(second.body, '');
  });

  test('skipTLSVerify reaches a self-signed HTTPS node; without it the certificate is refused with a hint', async () => {
    tlsSeen.length = 0;
    const skipped = await call(a.base, 'GET', '/queues?remoteNode=selfsigned', { unchecked: RECORDER });
    assert.equal(skipped.status, 201, skipped.text);
    assert.equal(tlsSeen.length, 1);
    const verified = await a.call('GET', '/queues?remoteNode=verified');
    assert.equal(verified.status, 502);
    assert.equal(verified.body.code, 'remote_node_error');
    assert.match(verified.body.message, /remote node "verified" cannot be reached \(.*SELF_SIGNED.*\); skipTLSVerify: true accepts/);
    assert.equal(tlsSeen.length, 1);
  });
});

test('a node that does not answer in time is 502 remote_node_error, and the request ends', async (t) => {
  const hanging = createServer(() => { /* never answers */ });
  const port = await listening(hanging);
  const server = await startTestServer('uws', {
    remoteNodes: [{ name: 'slow', apiBaseURL: `http://127.0.0.1:${port}/api/v2` }], remoteNodeTimeoutMs: 300,
  });
  t.after(async () => {
    await server.close();
    await closing(hanging);
  });
  const answer = await server.call('GET', '/dags?remoteNode=slow');
  assert.equal(answer.status, 502);
  assert.equal(answer.body.code, 'remote_node_error');
  assert.match(answer.body.message, /remote node "slow" did not answer within 0.3 s/);
});

test('through a node: its event stream and a step\'s log stream are passed on as they come, past the node timeout; a start-sync waits as long as it asks', async (t) => {
  const b = await startTestServer('node', { eventHeartbeatMs: 100 });
  const a = await startTestServer('uws', { remoteNodes: [{ name: 'B', apiBaseURL: `${b.base}/` }], remoteNodeTimeoutMs: 300 });
  t.after(async () => {
    await a.close();
    await b.close();
  });
  await b.writeDag('remote_slow', 'steps:\n  - name: nap\n    command: sleep 1; echo rested\n');
  const events = await SseClient.open(`${a.base}/events?remoteNode=B&dagName=remote_slow&types=run.*`);
  t.after(() => events.close());
  assert.equal(events.status, 200);
  assert.match(events.headers.get('content-type') ?? '', /^text\/event-stream/);
  // Longer than the node timeout: a stream is not cut by it.
  const synced = await a.call('POST', '/dags/remote_slow/start-sync?remoteNode=B', { timeout: 20 });
  assert.equal(synced.status, 200, synced.text);
  assert.equal(synced.body.dagRun.statusLabel, 'succeeded');
  const { dagRunId } = synced.body.dagRun;
  await events.until((messages) => messages.some((message) => message.event === 'run.succeeded'));
  assert.deepEqual(events.events().map((event) => [event.type, event.dagRunId]), [['run.running', dagRunId], ['run.succeeded', dagRunId]]);
  // B's numbers: a client resumes through A with Last-Event-ID as it would on B.
  const first = events.messages.find((message) => message.event === 'run.running')!;
  const resumed = await SseClient.open(`${a.base}/events?remoteNode=B&dagName=remote_slow&types=run.*`, { 'last-event-id': first.id! });
  t.after(() => resumed.close());
  const [, again] = await resumed.until((messages) => messages.length >= 2);
  assert.equal(again.event, 'run.succeeded');
  const log = await readLogStream(`${a.base}/dag-runs/remote_slow/${dagRunId}/steps/nap/log/stream?remoteNode=B`);
  assert.deepEqual(log, ['message:rested', 'end']);
});

/** A step's log stream read to its end, as `event:data` (data left out for `end`). */
async function readLogStream(url: string): Promise<string[]> {
  const stream = await SseClient.open(url);
  try {
    await waitUntil(async () => stream.ended, 10_000);
    return stream.messages.filter((message) => message.retry === undefined).map((message) => (message.event === 'end' ? 'end' : `${message.event}:${message.data}`));
  } finally {
    stream.close();
  }
}

test('config.yaml remoteNodes: Dagu keys (any case) are read, and every problem is named on one line', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-remote-config-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const file = join(home, 'config.yaml');
  await writeFile(file, [
    'remoteNodes:',
    '  - name: dev',
    '    apiBaseUrl: https://dev.example:8080/api/v2',
    '    isBasicAuth: true',
    '    basicAuthUsername: u',
    '    basicAuthPassword: p',
    '    skipTlsVerify: true',
    '  - name: prod',
    '    apiBaseURL: http://prod.example/api/v2',
    '    isAuthToken: true',
    '    authToken: t',
    '',
  ].join('\n'));
  const config = await resolveConfig({ home }, {});
  assert.deepEqual(config.remoteNodes, [
    { name: 'dev', apiBaseURL: 'https://dev.example:8080/api/v2', isBasicAuth: true, basicAuthUsername: 'u', basicAuthPassword: 'p', skipTLSVerify: true },
    { name: 'prod', apiBaseURL: 'http://prod.example/api/v2', isAuthToken: true, authToken: 't' },
  ]);
  await writeFile(file, [
    'remoteNodes:',
    '  - name: local',
    '    apiBaseURL: ftp://x/api/v2',
    '  - apiBaseURL: http://u:secret-in-url@x/api/v2',
    '    isAuthToken: true',
    '    colour: red',
    '  - name: a',
    '    apiBaseURL: http://a/api/v2',
    '    skipTLSVerify: "yes"',
    '  - name: a',
    '    apiBaseURL: http://b/api/v2',
    '    apibaseurl: http://c/api/v2',
    '',
  ].join('\n'));
  const error = await resolveConfig({ home }, {}).then(() => undefined, (failure: Error) => failure);
  assert.ok(error);
  assert.equal(error.message.split('\n').length, 1);
  for (const problem of [
    'remoteNodes[0].name "local" is reserved', 'remoteNodes[0].apiBaseURL must be an http or https URL, not ftp:',
    'remoteNodes[1]: unknown key "colour"', 'remoteNodes[1].name is required', 'remoteNodes[1].apiBaseURL must not hold credentials',
    'remoteNodes[1].authToken is required with isAuthToken', 'remoteNodes[2].skipTLSVerify must be true or false', 'remoteNodes[3]: node "a" is configured twice', 'remoteNodes[3].apiBaseURL is given twice',
  ]) assert.ok(error.message.includes(problem), `${problem} in: ${error.message}`);
  assert.ok(!error.message.includes('secret-in-url'), error.message);
  await writeFile(file, 'remoteNodes:\n  name: x\n');
  await assert.rejects(resolveConfig({ home }, {}), /remoteNodes must be a list/);
});

test('troupe start-all: a bad remote node stops the start in one line; SIGHUP reloads the nodes', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-remote-cli-'));
  const b = await startTestServer('uws');
  t.after(async () => {
    await b.close();
    await rm(home, { recursive: true, force: true });
  });
  await b.writeDag('on_b', HELLO);
  const file = join(home, 'config.yaml');
  await writeFile(file, `remoteNodes:\n  - name: b\n    apiBaseURL: not a url\n    isBasicAuth: true\n    basicAuthUsername: u\n    basicAuthPassword: ${PASSWORD}\n`);
  const refused = await startCli(['--home', home, '--port', '0']).then(() => assert.fail('started'), (error: Error) => error.message);
  assert.match(refused, /exited with 1: troupe: config file .*: remoteNodes\[0\]\.apiBaseURL must be an absolute http or https URL\n$/);
  assert.ok(!refused.includes(PASSWORD));
  await writeFile(file, `remoteNodes:\n  - name: b\n    apiBaseURL: ${b.base}\n    isBasicAuth: true\n    basicAuthUsername: u\n    basicAuthPassword: ${PASSWORD}\n`);
  const { child, base, output } = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const listed = await call(base, 'GET', '/dags?remoteNode=b&name=on_b');
  assert.deepEqual(listed.body.dags.map((dag: any) => dag.fileName), ['on_b']);
  await writeFile(file, 'remoteNodes: []\n');
  child.kill('SIGHUP');
  assert.ok(await waitUntil(() => /SIGHUP: .*remote nodes: none/.test(output())), output());
  const gone = await call(base, 'GET', '/dags?remoteNode=b');
  assert.equal(gone.status, 400);
  assert.match(gone.body.message, /remote node "b" is not configured/);
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);
  assert.ok(!output().includes(PASSWORD));
});

// A page of another site cannot ride what a visitor's browser adds by itself: the session cookie,
// remembered Basic credentials, or nothing at all where authentication is off. Requests that change
// something are refused when the browser says they come from elsewhere (Origin, Sec-Fetch-Site),
// dequeue (a GET) too; and with the session cookie, a body that is not JSON (a form, text/plain) is
// refused with 415.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { answerOf, checkedFetch, startTestServer, waitUntil, type Answer, type TestServer } from './helpers.ts';
import { basic, bearer, send, signIn } from './auth-support.ts';

const PASSWORD = 'cross-site-password';
const QUICK = 'maxActiveRuns: -1\nsteps:\n  - command: "true"\n';
const BUSY = 'maxActiveRuns: 1\nsteps:\n  - command: sleep 30\n';
const EVIL = 'https://evil.example';

async function request(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return answerOf(await checkedFetch(`${server.base}${path}`, { method, headers, body }));
}

const json = { 'content-type': 'application/json' };
const runsOf = async (server: TestServer, name: string, credential: ReturnType<typeof bearer>) => (await send(server, 'GET', `/dag-runs?name=${name}`, credential)).body.dagRuns;

describe('with builtin auth: the session cookie and Basic credentials', () => {
  let server: TestServer;
  let cookie: { cookie: string };
  let token: ReturnType<typeof bearer>;
  let own: string;
  before(async () => {
    server = await startTestServer('uws', { auth: { mode: 'builtin', admin: { username: 'x-admin', password: PASSWORD } }, corsOrigins: ['https://app.example'] });
    await server.writeDag('xs-quick', QUICK);
    await server.writeDag('xs-busy', BUSY);
    const session = await signIn(server, 'x-admin', PASSWORD);
    cookie = { cookie: `troupe_session=${session}` };
    token = bearer(session);
    own = new URL(server.base).origin;
  });
  after(() => server.close());

  test('a start from another site\'s page, with the cookie, is refused with 403 and starts nothing', async () => {
    const foreign: Array<Record<string, string>> = [{ origin: EVIL }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of foreign) {
      const refused = await request(server, 'POST', '/dags/xs-quick/start', { ...cookie, ...json, ...headers }, '{}');
      assert.deepEqual([refused.status, refused.body.code], [403, 'forbidden'], JSON.stringify(headers));
    }
    // Basic credentials are remembered and sent by a browser as a cookie is.
    const withBasic = await request(server, 'POST', '/dags/xs-quick/start', { ...basic('x-admin', PASSWORD)!, ...json, origin: EVIL }, '{}');
    assert.equal(withBasic.status, 403);
    assert.deepEqual(await runsOf(server, 'xs-quick', token), []);
  });

  test('with the cookie, a form or text body is refused with 415 and starts nothing, even without Origin or Sec-Fetch-Site', async () => {
    for (const [type, body] of [['application/x-www-form-urlencoded', '{"a":"=b"}'], ['text/plain', '{}'], ['multipart/form-data; boundary=x', '--x--\r\n']]) {
      for (const headers of [{ origin: own }, {}] as Array<Record<string, string>>) {
        const refused = await request(server, 'POST', '/dags/xs-quick/start', { ...cookie, 'content-type': type, ...headers }, body);
        assert.deepEqual([refused.status, refused.body.code], [415, 'unsupported_media_type'], type);
      }
    }
    assert.deepEqual(await runsOf(server, 'xs-quick', token), []);
  });

  test('the server\'s own pages, an allowed origin, a client that is no browser and a Bearer token from anywhere are served', async () => {
    const cases: Array<Record<string, string>> = [
      { ...cookie, origin: own, 'sec-fetch-site': 'same-origin' },
      { ...cookie, origin: 'https://app.example', 'sec-fetch-site': 'cross-site' },
      { ...cookie },
      { ...cookie, 'sec-fetch-site': 'none' },
      { ...token, origin: EVIL, 'sec-fetch-site': 'cross-site' },
      { ...basic('x-admin', PASSWORD)! },
    ];
    for (const headers of cases) {
      const started = await request(server, 'POST', '/dags/xs-quick/start', { ...headers, 'content-type': 'application/json; charset=utf-8' }, '{}');
      assert.equal(started.status, 200, `${JSON.stringify(Object.keys(headers))} ${headers.origin ?? ''}: ${started.text}`);
    }
    // Behind a proxy that names the server's host in X-Forwarded-Host.
    const proxied = await request(server, 'POST', '/dags/xs-quick/start', { ...cookie, ...json, origin: 'https://troupe.example', 'x-forwarded-host': 'troupe.example' }, '{}');
    assert.equal(proxied.status, 200);
    // Reading is not refused: a cross-site GET changes nothing, and CORS keeps its answer from the page.
    assert.equal((await request(server, 'GET', '/dags', { ...cookie, origin: EVIL, 'sec-fetch-site': 'cross-site' })).status, 200);
  });

  test('dequeue, a GET that changes a run, is refused from another site and served from the same one', async () => {
    const first = await send(server, 'POST', '/dags/xs-busy/enqueue', token, { dagRunId: 'busy' });
    assert.equal(first.status, 200);
    assert.ok(await waitUntil(async () => (await send(server, 'GET', '/dag-runs/xs-busy/busy', token)).body.dagRun?.status === 1), 'the first run runs');
    assert.equal((await send(server, 'POST', '/dags/xs-busy/enqueue', token, { dagRunId: 'waiting' })).status, 200);
    const link = await request(server, 'GET', '/dag-runs/xs-busy/waiting/dequeue', { ...cookie, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' });
    assert.deepEqual([link.status, link.body.code], [403, 'forbidden']);
    assert.equal((await send(server, 'GET', '/dag-runs/xs-busy/waiting', token)).body.dagRun.status, 5, 'still queued');
    const same = await request(server, 'GET', '/dag-runs/xs-busy/waiting/dequeue', { ...cookie, 'sec-fetch-site': 'same-origin' });
    assert.equal(same.status, 200, same.text);
    assert.equal((await send(server, 'POST', '/dag-runs/xs-busy/busy/stop', token)).status, 200);
  });
});

describe('with authentication off', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node');
    await server.writeDag('xo-quick', QUICK);
  });
  after(() => server.close());

  test('a page of another site cannot start a run on a server it can reach; curl and the server\'s own pages can', async () => {
    const refused = await request(server, 'POST', '/dags/xo-quick/start', { ...json, origin: EVIL }, '{}');
    assert.deepEqual([refused.status, refused.body.code], [403, 'forbidden']);
    const oldBrowser = await request(server, 'POST', '/dags/xo-quick/start', { 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' }, '{}');
    assert.equal(oldBrowser.status, 403);
    assert.deepEqual((await server.call('GET', '/dag-runs?name=xo-quick')).body.dagRuns, []);
    assert.equal((await request(server, 'POST', '/dags/xo-quick/start', json, '{}')).status, 200);
    assert.equal((await request(server, 'POST', '/dags/xo-quick/start', { ...json, origin: new URL(server.base).origin }, '{}')).status, 200);
    // Scripts that leave their JSON unlabelled, as curl -d (a form type) and fetch (text/plain) do.
    for (const headers of [{}, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'text/plain;charset=UTF-8' }] as Array<Record<string, string>>) {
      assert.equal((await request(server, 'POST', '/dags/xo-quick/start', headers, '{}')).status, 200, JSON.stringify(headers));
    }
  });
});

// Paths bound for a remote node: authorized here as the node will read them. Dot segments (plain or
// percent-encoded), empty segments and other spellings of a route cannot carry a viewer's request
// to an admin route there, nor out of the node's apiBaseURL. Requests go out as raw bytes (as
// `curl --path-as-is` sends them): fetch would resolve the dot segments before sending.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer, send, signIn } from './auth-support.ts';
import { startTestServer, type TestServer } from './helpers.ts';
import { exchange } from './raw-http.ts';

const PASSWORD = 'remote-paths-password-1';

describe('remote node paths: canonical before authorization, never outside apiBaseURL', () => {
  let server: TestServer;
  let remote: Server;
  const seen: string[] = [];
  const tokens = new Map<string, string>();

  before(async () => {
    remote = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"remote":true}');
      });
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const port = (remote.address() as AddressInfo).port;
    server = await startTestServer('uws', {
      auth: { mode: 'builtin', admin: { username: 'rp-admin', password: PASSWORD }, loginLimits: { perUser: 1000, perAddress: 1000, windowSec: 60 } },
      remoteNodes: [{ name: 'prod', apiBaseURL: `http://127.0.0.1:${port}/api/v2`, isAuthToken: true, authToken: 'prod-node-secret-token' }],
    });
    const admin = bearer(await signIn(server, 'rp-admin', PASSWORD));
    for (const role of ['viewer', 'manager']) {
      assert.equal((await send(server, 'POST', '/users', admin, { username: `rp-${role}`, password: PASSWORD, role })).status, 201);
      tokens.set(role, await signIn(server, `rp-${role}`, PASSWORD));
    }
  });
  after(async () => {
    await server?.close();
    remote?.closeAllConnections();
    await new Promise((resolve) => remote?.close(resolve));
  });

  /** One raw request with the role's token, as written: no client-side normalisation. */
  async function raw(role: string, method: string, target: string, body?: string) {
    const headers = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${server.troupe.server.port}`, `Authorization: Bearer ${tokens.get(role)}`, 'Connection: close'];
    if (body !== undefined) headers.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    const { responses } = await exchange(server.troupe.server.port, `${headers.join('\r\n')}\r\n\r\n${body ?? ''}`, { expect: 1 });
    assert.equal(responses.length, 1, `${method} ${target}: one answer`);
    return { status: responses[0].status, body: JSON.parse(responses[0].body || 'null') };
  }

  test("a viewer's dot segments cannot reach the node's users, in any spelling", async () => {
    seen.length = 0;
    for (const path of ['/api/v2/dags/../users', '/api/v2/dags/%2e%2e/users', '/api/v2/dags/.%2E/users', '/api/v2/dags/./../users', '/api/v2/x/%2E./users']) {
      const answer = await raw('viewer', 'GET', `${path}?remoteNode=prod`);
      assert.equal(answer.status, 400, path);
      assert.equal(answer.body.code, 'bad_request', path);
      assert.match(answer.body.message, /dot segment/, path);
    }
    assert.deepEqual(seen, [], 'nothing reached the node');
  });

  test("a manager cannot create the node's API keys through an encoded or doubled path", async () => {
    seen.length = 0;
    const body = JSON.stringify({ name: 'escalated', role: 'admin' });
    const refused = await raw('manager', 'POST', '/api/v2/x/../api-keys?remoteNode=prod', body);
    assert.equal(refused.status, 400);
    const doubled = await raw('manager', 'POST', '/api/v2//api-keys?remoteNode=prod', body);
    assert.equal(doubled.status, 400);
    assert.match(doubled.body.message, /empty segment/);
    // `%61pi-keys` is `api-keys`: a route that takes no remoteNode, so it is answered here, where a
    // manager may not create keys.
    const encoded = await raw('manager', 'POST', '/api/v2/%61pi-keys?remoteNode=prod', body);
    assert.equal(encoded.status, 403);
    assert.equal(encoded.body.code, 'forbidden');
    const viewerUsers = await raw('viewer', 'GET', '/api/v2/%75sers?remoteNode=prod');
    assert.equal(viewerUsers.status, 403);
    assert.deepEqual(seen, [], 'nothing reached the node');
  });

  test("nothing is sent outside the node's apiBaseURL: parent paths, backslashes, fragments", async () => {
    seen.length = 0;
    const parent = await raw('viewer', 'GET', '/api/v2/../../../../etc/passwd?remoteNode=prod');
    assert.ok(parent.status === 400 || parent.status === 404, `refused: ${parent.status}`);
    for (const path of ['/api/v2/dags/..\\..\\users', '/api/v2/dags/x%5C..%5C..%5Cusers', '/api/v2/dags#/../../users']) {
      const answer = await raw('viewer', 'GET', `${path}?remoteNode=prod`);
      if (answer.status === 200) assert.deepEqual(answer.body, { remote: true });
    }
    for (const request of seen) {
      assert.match(request, /^GET \/api\/v2\/dags\/[^/?#]+(\?|$)/, `stayed a DAG path below apiBaseURL: ${request}`);
      assert.doesNotMatch(request, /\\|\/users/, request);
    }
  });

  test('a canonical path goes to the node as it was authorized, with the node credentials', async () => {
    seen.length = 0;
    const list = await raw('viewer', 'GET', '/api/v2/dags?remoteNode=prod&perPage=5');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { remote: true });
    const encoded = await raw('viewer', 'GET', '/api/v2/dag-runs/a%20b/r1/steps/say%20hi%2fthere/log?remoteNode=prod');
    assert.equal(encoded.status, 200);
    assert.deepEqual(seen, ['GET /api/v2/dags?perPage=5', 'GET /api/v2/dag-runs/a%20b/r1/steps/say%20hi%2Fthere/log']);
  });
});

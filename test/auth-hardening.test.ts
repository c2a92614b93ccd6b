// What keeps a shared deployment safe: sign-in limits per username and per address, secrets that
// never reach a response, the store or the log, a signing secret that outlives a restart, the
// permission switches, the first admin, and no way to a remote node without credentials.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { homePaths, startTroupe } from '../src/main.ts';
import { setLogLevel, setLogSink } from '../src/logging/index.ts';
import { HELLO, startTestServer, uncheckedFetch, type TestServer } from './helpers.ts';
import { basic, bearer, send, signIn } from './auth-support.ts';

const PASSWORD = 'hardening-password-1';

for (const carrier of ['node', 'uws'] as const) {
  describe(`sign-in limits on ${carrier} (the carrier passes the client's address)`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(carrier, {
        auth: { mode: 'builtin', admin: { username: 'h-admin', password: PASSWORD }, loginLimits: { perUser: 3, perAddress: 6, windowSec: 600 } },
      });
    });
    after(() => server.close());

    test('past the failures allowed for a username, even its right password is refused with 429 and Retry-After', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await send(server, 'POST', '/auth/login', undefined, { username: 'h-admin', password: `wrong-${i}-password` })).status, 401);
      const limited = await send(server, 'POST', '/auth/login', undefined, { username: 'h-admin', password: PASSWORD });
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 'too_many_requests');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      // Basic credentials count against the same limits.
      assert.equal((await send(server, 'GET', '/dags', basic('h-admin', PASSWORD))).status, 429);
    });

    test('past the failures allowed from an address, every username is refused from it', async () => {
      // 3 failures so far from this address; 3 more with other names reach its limit of 6.
      for (const name of ['x1', 'x2', 'x3']) assert.equal((await send(server, 'POST', '/auth/login', undefined, { username: name, password: 'wrong-password' })).status, 401);
      assert.equal((await send(server, 'POST', '/auth/login', undefined, { username: 'x4', password: 'wrong-password' })).body.code, 'too_many_requests');
    });
  });
}

describe('secrets stay secret', () => {
  let home: string;
  const lines: string[] = [];
  let restoreSink: () => void;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'troupe-auth-'));
    setLogLevel('debug');
    restoreSink = setLogSink({ write: (line: string) => { lines.push(line); return true; } } as never);
  });
  after(async () => {
    restoreSink();
    setLogLevel('info');
    await rm(home, { recursive: true, force: true });
  });

  test('no password, token, key or hash in a response, the log or the store; sessions outlive a restart', async () => {
    const auth = { mode: 'builtin' as const, admin: { username: 's-admin', password: PASSWORD }, token: 'static-token-secret-1', basic: { username: 's-basic', password: 'static-basic-secret-1' } };
    const first = await startTroupe({ host: '127.0.0.1', port: 0, ...homePaths(home), home, carrier: 'node', maxThreads: 1, auth });
    const base = `http://127.0.0.1:${first.server.port}/api/v2`;
    const server = { base } as TestServer;
    const answers: string[] = [];
    const token = await signIn(server, 's-admin', PASSWORD);
    const admin = bearer(token);
    const created = await send(server, 'POST', '/users', admin, { username: 's-user', password: 'user-secret-password', role: 'viewer' });
    const key = await send(server, 'POST', '/api-keys', admin, { name: 's-key', role: 'viewer' });
    answers.push(created.text, (await send(server, 'GET', '/users', admin)).text, (await send(server, 'GET', '/api-keys', admin)).text,
      (await send(server, 'GET', '/auth/me', admin)).text, (await send(server, 'POST', '/auth/login', undefined, { username: 's-user', password: 'wrong-password' })).text);
    await first.close();

    const secrets = [PASSWORD, 'user-secret-password', 'static-token-secret-1', 'static-basic-secret-1', key.body.key, token, '$argon2'];
    // The store holds hashes: neither a password nor the key in its bytes.
    const dataDir = homePaths(home).dataDir;
    const stored = Buffer.concat(await Promise.all((await readdir(dataDir)).filter((file) => file.endsWith('.mdb')).map((file) => readFile(join(dataDir, file)))));
    for (const secret of [PASSWORD, 'user-secret-password', key.body.key]) assert.ok(!stored.includes(secret), `the store holds ${secret.slice(0, 8)}...`);
    // The signing secret was generated and kept: the session token still works after a restart.
    const second = await startTestServer('node', { home, auth });
    try {
      assert.equal((await send(second, 'GET', '/auth/me', admin)).status, 200);
    } finally {
      await second.close();
    }
    for (const text of answers) for (const secret of secrets) assert.ok(!text.includes(secret), `a response shows ${secret.slice(0, 8)}...`);
    assert.ok(lines.length > 0, 'the debug log was captured');
    for (const secret of secrets) assert.ok(!lines.join('\n').includes(secret), `the log shows ${secret.slice(0, 8)}...`);
  });
});

describe('the permission switches (Dagu\'s permissions.writeDAGs and runDAGs)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node', { auth: { permissions: { writeDAGs: false, runDAGs: false } } });
    await server.writeDag('sw-hello', HELLO);
  });
  after(() => server.close());

  test('switched off, nobody writes or runs DAGs, in mode none too; reads are served', async () => {
    const write = await server.call('POST', '/dags', { name: 'sw-new' });
    assert.deepEqual([write.status, write.body.message], [403, 'writing DAGs is turned off on this server (permissions.writeDAGs)']);
    assert.equal((await server.call('PUT', '/dags/sw-hello/spec', { spec: HELLO })).status, 403);
    const run = await server.call('POST', '/dags/sw-hello/start', {});
    assert.deepEqual([run.status, run.body.message], [403, 'running DAGs is turned off on this server (permissions.runDAGs)']);
    assert.equal((await server.call('GET', '/dags/sw-hello')).status, 200);
    assert.equal((await server.call('POST', '/users', { username: 'sw-user', password: PASSWORD, role: 'viewer' })).status, 201);
  });
});

describe('starting builtin mode', () => {
  test('without a user and without the first admin\'s password, the start fails and says what to set', async () => {
    await assert.rejects(startTestServer('node', { auth: { mode: 'builtin' } }), /auth\.builtin\.admin\.password \(TROUPE_AUTH_ADMIN_PASSWORD\)/);
  });

  test('static credentials work in any mode: mode none with a static token requires it', async () => {
    const server = await startTestServer('node', { auth: { token: 'none-mode-token-123' } });
    try {
      assert.equal((await send(server, 'GET', '/dags', undefined)).status, 401);
      assert.equal((await send(server, 'GET', '/dags', bearer('none-mode-token-123'))).status, 200);
      assert.equal((await send(server, 'GET', '/health', undefined)).status, 200, '/health is public by default');
      assert.equal((await send(server, 'GET', '/metrics', undefined)).status, 200, '/metrics is never behind authentication');
    } finally {
      await server.close();
    }
  });

  test('public paths are configurable: without /health it needs credentials; /metrics stays open', async () => {
    const server = await startTestServer('node', { auth: { token: 'public-paths-token', publicPaths: ['/dags/tags'] } });
    try {
      assert.equal((await send(server, 'GET', '/health', undefined)).status, 401);
      assert.equal((await send(server, 'GET', '/dags/tags', undefined)).status, 200);
      assert.equal((await send(server, 'GET', '/metrics', undefined)).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe('remote nodes behind authentication', () => {
  let remote: Server;
  let reached = 0;
  let server: TestServer;
  before(async () => {
    remote = createServer((_req, res) => {
      reached++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"dags":[],"errors":[],"pagination":{"totalRecords":0,"currentPage":1,"totalPages":1,"nextPage":0,"prevPage":0}}');
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', () => resolve()));
    const port = (remote.address() as AddressInfo).port;
    server = await startTestServer('uws', {
      remoteNodes: [{ name: 'far', apiBaseURL: `http://127.0.0.1:${port}/api/v2` }],
      auth: { mode: 'builtin', admin: { username: 'r-admin', password: PASSWORD } },
    });
  });
  after(async () => {
    await server.close();
    remote.closeAllConnections();
    await new Promise((resolve) => remote.close(resolve));
  });

  test('a request for a remote node without credentials, or with a role that may not, never leaves this server', async () => {
    assert.equal((await send(server, 'GET', '/dags?remoteNode=far', undefined)).status, 401);
    assert.equal((await send(server, 'GET', '/not-a-route-here?remoteNode=far', undefined)).status, 401);
    const admin = bearer(await signIn(server, 'r-admin', PASSWORD));
    const viewerKey = (await send(server, 'POST', '/api-keys', admin, { name: 'r-viewer', role: 'viewer' })).body.key;
    assert.equal((await send(server, 'POST', '/dags?remoteNode=far', bearer(viewerKey), { name: 'x' })).status, 403);
    assert.equal((await send(server, 'POST', '/dags/x/start?remoteNode=far', bearer(viewerKey), {})).status, 403);
    assert.equal(reached, 0);
    const forwarded = await uncheckedFetch('the answer is the stand-in remote node\'s, passed on as it is', `${server.base}/dags?remoteNode=far`, { headers: { authorization: `Bearer ${viewerKey}` } });
    assert.equal(forwarded.status, 200);
    assert.equal(reached, 1);
  });
});

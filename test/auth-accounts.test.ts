// Builtin authentication as a user sees it: sign-in, the caller, passwords, user management, API
// keys, and tokens that stop working after a password change, a reset or a deletion.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { HELLO, startTestServer, uncheckedFetch, type TestServer } from './helpers.ts';
import { basic, bearer, send, signIn, waitForRunAs, type Credential } from './auth-support.ts';

const PASSWORD = 'accounts-password-1';

describe('builtin accounts', () => {
  let server: TestServer;
  let admin: Credential;
  before(async () => {
    server = await startTestServer('node', { auth: { mode: 'builtin', admin: { username: 'a-admin', password: PASSWORD } } });
    await server.writeDag('acc-hello', HELLO);
    admin = bearer(await signIn(server, 'a-admin', PASSWORD));
  });
  after(() => server.close());

  const createUser = async (username: string, role: string) => {
    const created = await send(server, 'POST', '/users', admin, { username, password: PASSWORD, role });
    assert.equal(created.status, 201, created.text);
    return created.body.user.id as string;
  };

  test('sign-in answers a token, its expiry and the user; a wrong password or an unknown user the same 401', async () => {
    const login = await send(server, 'POST', '/auth/login', undefined, { username: 'a-admin', password: PASSWORD });
    assert.equal(login.status, 200);
    assert.deepEqual(Object.keys(login.body).sort(), ['expiresAt', 'token', 'user']);
    assert.deepEqual(Object.keys(login.body.user).sort(), ['createdAt', 'id', 'role', 'updatedAt', 'username']);
    assert.equal(login.body.user.role, 'admin');
    // 24 h by default.
    const hours = (Date.parse(login.body.expiresAt) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, `${hours} h`);
    // The dashboard's sign-in: the same token as an HttpOnly cookie, which the cookie alone then signs in, and sign-out clears.
    const cookie = login.headers.get('set-cookie') ?? '';
    assert.match(cookie, new RegExp(`^troupe_session=${login.body.token}; .*HttpOnly; SameSite=Strict`));
    assert.equal((await send(server, 'GET', '/auth/me', { cookie: cookie.split(';')[0] })).body.user.username, 'a-admin');
    assert.match((await send(server, 'POST', '/auth/logout', undefined, {})).headers.get('set-cookie') ?? '', /^troupe_session=; .*Expires=Thu, 01 Jan 1970/);
    const wrong = await send(server, 'POST', '/auth/login', undefined, { username: 'a-admin', password: 'wrong-password' });
    const unknown = await send(server, 'POST', '/auth/login', undefined, { username: 'nobody', password: 'wrong-password' });
    assert.deepEqual([wrong.status, wrong.body], [401, { code: 'unauthorized', message: 'Invalid username or password' }]);
    assert.deepEqual([unknown.status, unknown.body], [401, { code: 'unauthorized', message: 'Invalid username or password' }]);
    assert.equal((await send(server, 'POST', '/auth/login', undefined, { username: 'a-admin' })).status, 400);
  });

  test('a 401 to a page\'s script (fetch, EventSource) challenges for Bearer only, so the browser shows no password dialog; a navigation keeps Basic', async () => {
    // node:http, as Node's fetch sets Sec-Fetch-Mode itself.
    const challenge = (mode: string | undefined) => new Promise<string | undefined>((resolve, reject) => {
      const headers = mode ? { 'sec-fetch-mode': mode, 'sec-fetch-site': 'same-origin' } : {};
      get(`${server.base}/auth/me`, { headers }, (response) => {
        response.resume();
        resolve(response.headers['www-authenticate']);
      }).on('error', reject);
    });
    assert.equal(await challenge('cors'), 'Bearer realm="troupe"');
    assert.equal(await challenge('same-origin'), 'Bearer realm="troupe"');
    assert.equal(await challenge('navigate'), 'Basic realm="troupe", Bearer realm="troupe"');
    assert.equal(await challenge(undefined), 'Basic realm="troupe", Bearer realm="troupe"');
    // Node's fetch sends Sec-Fetch-Mode: cors without Sec-Fetch-Site: a script, not a browser's page.
    const scripted = await uncheckedFetch('Node\'s own fetch is the client under test here: it sends Sec-Fetch-Mode and no Sec-Fetch-Site', `${server.base}/auth/me`);
    assert.equal(scripted.headers.get('www-authenticate'), 'Basic realm="troupe", Bearer realm="troupe"');
  });

  test('GET /auth/methods tells anyone how to sign in: credentials needed, with a password, no OIDC provider here; with auth off none is needed', async () => {
    assert.deepEqual((await send(server, 'GET', '/auth/methods', undefined)).body, { required: true, password: true, oidc: false });
    const open = await startTestServer('node');
    try {
      assert.deepEqual((await send(open, 'GET', '/auth/methods', undefined)).body, { required: false, password: false, oidc: false });
    } finally {
      await open.close();
    }
  });

  test('GET /auth/me names the caller, whichever credential it sent', async () => {
    const me = await send(server, 'GET', '/auth/me', admin);
    assert.equal(me.body.user.username, 'a-admin');
    assert.equal((await send(server, 'GET', '/auth/me', basic('a-admin', PASSWORD))).body.user.id, me.body.user.id);
    const key = await send(server, 'POST', '/api-keys', admin, { name: 'me-key', role: 'viewer' });
    assert.deepEqual((await send(server, 'GET', '/auth/me', bearer(key.body.key))).body.user, { id: '', username: 'me-key', role: 'viewer', createdAt: '', updatedAt: '' });
    assert.equal((await send(server, 'GET', '/auth/me', undefined)).status, 401);
  });

  test('user management: create, list, read, rename, change role, delete; the rules of each', async () => {
    const id = await createUser('u-one', 'viewer');
    assert.deepEqual((await send(server, 'POST', '/users', admin, { username: 'u-one', password: PASSWORD, role: 'viewer' })).body.code, 'already_exists');
    assert.deepEqual((await send(server, 'POST', '/users', admin, { username: 'u-bad', password: PASSWORD, role: 'root' })).body, { code: 'bad_request', message: 'Invalid role' });
    const weak = await send(server, 'POST', '/users', admin, { username: 'u-weak', password: 'a', role: 'viewer' });
    assert.equal(weak.status, 400);
    assert.match(weak.body.message, /^Password does not meet security requirements/);
    assert.equal((await send(server, 'POST', '/users', admin, { username: 'a:b', password: PASSWORD, role: 'viewer' })).status, 400);
    assert.ok((await send(server, 'GET', '/users', admin)).body.users.some((user: any) => user.id === id));
    assert.equal((await send(server, 'GET', `/users/${id}`, admin)).body.user.username, 'u-one');
    const token = await signIn(server, 'u-one', PASSWORD);
    // A viewer may not start a run; promoted to operator, the same token may at once.
    assert.equal((await send(server, 'POST', '/dags/acc-hello/start', bearer(token), {})).status, 403);
    const renamed = await send(server, 'PATCH', `/users/${id}`, admin, { username: 'u-renamed', role: 'operator' });
    assert.deepEqual([renamed.body.user.username, renamed.body.user.role], ['u-renamed', 'operator']);
    const started = await send(server, 'POST', '/dags/acc-hello/start', bearer(token), {});
    assert.equal(started.status, 200);
    await waitForRunAs(server, admin, 'acc-hello', started.body.dagRunId);
    assert.equal((await send(server, 'PATCH', `/users/${id}`, admin, { username: 'a-admin' })).body.code, 'already_exists');
    assert.equal((await send(server, 'DELETE', `/users/${id}`, admin)).status, 204);
    assert.equal((await send(server, 'GET', '/auth/me', bearer(token))).status, 401, 'a deleted user\'s token no longer works');
    assert.equal((await send(server, 'GET', `/users/${id}`, admin)).status, 404);
    assert.equal((await send(server, 'DELETE', `/users/${id}`, admin)).status, 404);
  });

  test('an admin cannot delete or demote themselves, nor leave the server without an admin', async () => {
    const me = (await send(server, 'GET', '/auth/me', admin)).body.user.id;
    assert.deepEqual((await send(server, 'DELETE', `/users/${me}`, admin)).body, { code: 'forbidden', message: 'cannot delete yourself' });
    assert.equal((await send(server, 'PATCH', `/users/${me}`, admin, { role: 'viewer' })).status, 403);
    const other = await createUser('u-admin2', 'admin');
    const second = bearer(await signIn(server, 'u-admin2', PASSWORD));
    assert.equal((await send(server, 'PATCH', `/users/${me}`, second, { role: 'manager' })).status, 200);
    assert.deepEqual((await send(server, 'DELETE', `/users/${other}`, admin)).body.code, 'forbidden', 'a manager may not manage users');
    assert.equal((await send(server, 'PATCH', `/users/${me}`, second, { role: 'admin' })).status, 200);
    assert.equal((await send(server, 'DELETE', `/users/${other}`, admin)).status, 204);
  });

  test('change-password: the current password is checked; old tokens stop working, the new password signs in', async () => {
    await createUser('u-change', 'viewer');
    const token = await signIn(server, 'u-change', PASSWORD);
    const other = await signIn(server, 'u-change', PASSWORD);
    assert.deepEqual((await send(server, 'POST', '/auth/change-password', bearer(token), { currentPassword: 'not-it-at-all', newPassword: 'accounts-password-2' })).body,
      { code: 'unauthorized', message: 'current password is wrong' });
    assert.equal((await send(server, 'POST', '/auth/change-password', bearer(token), { currentPassword: PASSWORD, newPassword: 'short' })).status, 400);
    const changed = await send(server, 'POST', '/auth/change-password', bearer(token), { currentPassword: PASSWORD, newPassword: 'accounts-password-2' });
    assert.equal(changed.status, 200);
    for (const old of [token, other]) assert.equal((await send(server, 'GET', '/auth/me', bearer(old))).status, 401);
    assert.equal((await send(server, 'GET', '/auth/me', basic('u-change', PASSWORD))).status, 401);
    assert.equal((await send(server, 'GET', '/auth/me', bearer(await signIn(server, 'u-change', 'accounts-password-2')))).status, 200);
    const key = await send(server, 'POST', '/api-keys', admin, { name: 'cp-key', role: 'admin' });
    assert.equal((await send(server, 'POST', '/auth/change-password', bearer(key.body.key), { currentPassword: 'x', newPassword: 'accounts-password-2' })).status, 400, 'an API key has no password');
  });

  test('Basic credentials of a user, sent on every request: a changed password, a new role and a deletion apply at the next request', async () => {
    const id = await createUser('u-basic', 'viewer');
    for (let i = 0; i < 3; i++) assert.equal((await send(server, 'GET', '/auth/me', basic('u-basic', PASSWORD))).body.user.role, 'viewer');
    assert.equal((await send(server, 'GET', '/auth/me', basic('u-basic', 'not-the-password'))).status, 401);
    assert.equal((await send(server, 'PATCH', `/users/${id}`, admin, { role: 'operator' })).status, 200);
    assert.equal((await send(server, 'GET', '/auth/me', basic('u-basic', PASSWORD))).body.user.role, 'operator');
    assert.equal((await send(server, 'POST', `/users/${id}/reset-password`, admin, { newPassword: 'accounts-password-4' })).status, 200);
    assert.equal((await send(server, 'GET', '/auth/me', basic('u-basic', PASSWORD))).status, 401);
    assert.equal((await send(server, 'GET', '/auth/me', basic('u-basic', 'accounts-password-4'))).status, 200);
    assert.equal((await send(server, 'DELETE', `/users/${id}`, admin)).status, 204);
    assert.equal((await send(server, 'GET', '/auth/me', basic('u-basic', 'accounts-password-4'))).status, 401);
  });

  test('reset-password (admin): the user\'s tokens stop working; the new password signs in', async () => {
    const id = await createUser('u-reset', 'operator');
    const token = await signIn(server, 'u-reset', PASSWORD);
    assert.equal((await send(server, 'POST', `/users/${id}/reset-password`, bearer(token), { newPassword: 'accounts-password-3' })).status, 403);
    assert.equal((await send(server, 'POST', `/users/${id}/reset-password`, admin, { newPassword: 'short' })).status, 400);
    assert.equal((await send(server, 'POST', '/users/nope/reset-password', admin, { newPassword: 'accounts-password-3' })).status, 404);
    assert.equal((await send(server, 'POST', `/users/${id}/reset-password`, admin, { newPassword: 'accounts-password-3' })).status, 200);
    assert.equal((await send(server, 'GET', '/auth/me', bearer(token))).status, 401);
    await signIn(server, 'u-reset', 'accounts-password-3');
  });

  test('API keys: shown once, stored hashed, usable as a Bearer token with their role, revocable', async () => {
    const created = await send(server, 'POST', '/api-keys', admin, { name: 'k-life', description: 'for CI', role: 'viewer' });
    assert.equal(created.status, 201);
    const { key, apiKey } = created.body;
    assert.match(key, /^troupe_[A-Za-z0-9_-]{43}$/);
    assert.ok(key.startsWith(apiKey.keyPrefix));
    assert.equal(apiKey.lastUsedAt, null);
    assert.equal((await send(server, 'POST', '/api-keys', admin, { name: 'k-life', role: 'viewer' })).status, 409);
    assert.equal((await send(server, 'POST', '/api-keys', admin, { name: 'k-bad', role: 'root' })).status, 400);
    for (const listing of [await send(server, 'GET', '/api-keys', admin), await send(server, 'GET', `/api-keys/${apiKey.id}`, admin)]) {
      assert.ok(!listing.text.includes(key.slice(apiKey.keyPrefix.length)), 'the key is never shown again');
    }
    assert.equal((await send(server, 'GET', '/dags', bearer(key))).status, 200);
    assert.equal((await send(server, 'POST', '/dags/acc-hello/suspend', bearer(key), { suspend: false })).status, 403);
    assert.notEqual((await send(server, 'GET', `/api-keys/${apiKey.id}`, admin)).body.apiKey.lastUsedAt, null);
    assert.equal((await send(server, 'PATCH', `/api-keys/${apiKey.id}`, admin, { role: 'operator', name: 'k-life2' })).body.apiKey.role, 'operator');
    assert.equal((await send(server, 'POST', '/dags/acc-hello/suspend', bearer(key), { suspend: false })).status, 200);
    assert.equal((await send(server, 'GET', '/api-keys', bearer(key))).status, 403, 'an operator key may not manage keys');
    assert.equal((await send(server, 'DELETE', `/api-keys/${apiKey.id}`, admin)).status, 204);
    const revoked = await send(server, 'GET', '/dags', bearer(key));
    assert.deepEqual([revoked.status, revoked.body.code], [401, 'unauthorized']);
    assert.equal((await send(server, 'DELETE', `/api-keys/${apiKey.id}`, admin)).status, 404);
    assert.equal((await send(server, 'GET', '/dags', bearer('troupe_not-a-real-key'))).status, 401);
  });

  test('malformed credentials are refused with both challenges', async () => {
    for (const credential of [{ authorization: 'Digest abc' }, { authorization: 'Basic' }, { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }, bearer('not.a.jwt')]) {
      const answer = await send(server, 'GET', '/dags', credential);
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get('www-authenticate'), 'Basic realm="troupe", Bearer realm="troupe"');
    }
  });
});

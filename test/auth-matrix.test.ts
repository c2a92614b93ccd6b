// The auth matrix, generated from the route table: every route x every kind of credential x every
// role, on one server in builtin mode that also has static Basic credentials and a static token.
// Each cell asserts that authentication refused (401 unauthorized with both challenges, or 403
// forbidden) or let the request through to its handler (any other status: the handler may answer
// 400 or 404 for the dummy parameters). A second server in mode none serves every route to anyone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLES, type Role } from '../src/core/index.ts';
import { roleAllows } from '../src/auth/index.ts';
import { apiRouter } from '../src/http/index.ts';
import { startTestServer, type TestServer } from './helpers.ts';
import { basic, bearer, expiredToken, inBatches, send, signIn, type Credential } from './auth-support.ts';

const SECRET = 'matrix-signing-secret-0123456789abcdef';
const PASSWORD = 'matrix-password-1';
const STATIC = { username: 'static-user', password: 'static-password-1', token: 'static-token-0123456789' };

interface Cell {
  label: string;
  credential: Credential;
  /** undefined: let through; else the refusal. */
  expect: (permission: string | undefined) => 401 | 403 | undefined;
}

/** The route's pattern with a dummy value for each parameter. */
const dummyPath = (pattern: string) => pattern.replace(/:([A-Za-z]+)/g, 'matrix-$1');
const hasBody = (method: string) => method === 'POST' || method === 'PUT' || method === 'PATCH';

describe('the auth matrix: every route, every credential, every role (builtin mode)', () => {
  let server: TestServer;
  const cells: Cell[] = [];
  before(async () => {
    server = await startTestServer('uws', {
      auth: {
        mode: 'builtin', admin: { username: 'm-admin', password: PASSWORD }, tokenSecret: SECRET,
        basic: { username: STATIC.username, password: STATIC.password }, token: STATIC.token,
        // The bad-password cells must not trip the sign-in limits.
        loginLimits: { perUser: 1_000_000, perAddress: 1_000_000, windowSec: 60 },
      },
    });
    const admin = bearer(await signIn(server, 'm-admin', PASSWORD));
    const tokens = new Map<Role, string>([['admin', (admin as { authorization: string }).authorization.slice(7)]]);
    const keys = new Map<Role, string>();
    for (const role of ROLES) {
      if (role !== 'admin') {
        assert.equal((await send(server, 'POST', '/users', admin, { username: `m-${role}`, password: PASSWORD, role })).status, 201);
        tokens.set(role, await signIn(server, `m-${role}`, PASSWORD));
      }
      const key = await send(server, 'POST', '/api-keys', admin, { name: `m-${role}`, role });
      assert.equal(key.status, 201);
      keys.set(role, key.body.key);
    }
    const revoked = await send(server, 'POST', '/api-keys', admin, { name: 'm-revoked', role: 'admin' });
    assert.equal((await send(server, 'DELETE', `/api-keys/${revoked.body.apiKey.id}`, admin)).status, 204);
    const adminId = (await send(server, 'GET', '/auth/me', admin)).body.user.id;

    const refused = (status: 401) => () => status;
    cells.push(
      { label: 'no credentials', credential: undefined, expect: refused(401) },
      { label: 'a bad password', credential: basic('m-admin', 'not-the-password'), expect: refused(401) },
      { label: 'an expired JWT', credential: bearer(await expiredToken(SECRET, adminId)), expect: refused(401) },
      { label: 'a revoked API key', credential: bearer(revoked.body.key), expect: refused(401) },
      { label: 'a token of another secret', credential: bearer(await expiredToken('another-secret-0123456789', adminId)), expect: refused(401) },
      { label: 'static Basic', credential: basic(STATIC.username, STATIC.password), expect: () => undefined },
      { label: 'the static token', credential: bearer(STATIC.token), expect: () => undefined },
    );
    for (const role of ROLES) {
      const byRole = (permission: string | undefined) => (permission === undefined || roleAllows(role, permission as never) ? undefined : 403);
      cells.push(
        { label: `${role} JWT`, credential: bearer(tokens.get(role)!), expect: byRole },
        { label: `${role} session cookie`, credential: { cookie: `theme=dark; troupe_session=${tokens.get(role)!}` }, expect: byRole },
        { label: `${role} API key`, credential: bearer(keys.get(role)!), expect: byRole },
        { label: `${role} Basic`, credential: basic(`m-${role}`, PASSWORD), expect: byRole },
      );
    }
  });
  after(() => server.close());

  test('every cell answers as the role table says', async () => {
    const routes = apiRouter().entries();
    const problems: string[] = [];
    const tasks = routes.flatMap((route) => cells.map((cell) => async () => {
      const open = route.public || route.pattern === '/health';
      // undefined permission: a public route (checked below that every other route declares one).
      const expected = open ? undefined : cell.expect(route.permission);
      const answer = await send(server, route.method, dummyPath(route.pattern), cell.credential, hasBody(route.method) ? {} : undefined);
      const where = `${route.method} ${route.pattern} with ${cell.label}: ${answer.status} ${answer.text.slice(0, 120)}`;
      if (expected === undefined) {
        if (answer.status === 401 || answer.status === 403) problems.push(`${where}, expected to be let through`);
      } else if (answer.status !== expected || answer.body?.code !== (expected === 401 ? 'unauthorized' : 'forbidden')) {
        problems.push(`${where}, expected ${expected}`);
      } else if (expected === 401 && answer.headers.get('www-authenticate') !== 'Basic realm="troupe", Bearer realm="troupe"') {
        problems.push(`${where}: WWW-Authenticate is ${answer.headers.get('www-authenticate')}`);
      }
    }));
    await inBatches(tasks, 6);
    assert.deepEqual(problems, []);
    assert.ok(tasks.length > 1000, `${tasks.length} cells`);
  });

  test('every route that is not public declares its permission', () => {
    const undeclared = apiRouter().entries().filter((route) => !route.public && !route.permission).map((route) => `${route.method} ${route.pattern}`);
    assert.deepEqual(undeclared, []);
  });
});

describe('mode none without credentials configured: every route is served to anyone, as before', () => {
  let server: TestServer;
  before(async () => { server = await startTestServer('node'); });
  after(() => server.close());

  test('no route answers 401 or 403', async () => {
    const answers = await inBatches(apiRouter().entries().map((route) => async () => {
      const answer = await send(server, route.method, dummyPath(route.pattern), undefined, hasBody(route.method) ? {} : undefined);
      return `${route.method} ${route.pattern} ${answer.status}`;
    }));
    assert.deepEqual(answers.filter((line) => / 40[13]$/.test(line)), []);
  });
});

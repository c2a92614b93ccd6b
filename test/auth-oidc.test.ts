// OIDC login end to end: a real provider (oidc-provider) on a loopback port, troupe in auth mode
// oidc, and the test as the browser (cookies kept, redirects and the provider's forms followed by
// hand). The session the callback sets is then what calls the API.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, startCli } from './cli-process.ts';
import { checkedFetch, startTestServer, type TestServer } from './helpers.ts';
import { browse, CookieJar, documented, signInAtProvider, startTestProvider, type Hop, type TestProvider } from './support/oidc-provider.ts';
import { freePort } from './support/ports.ts';

const ACCOUNTS = {
  alice: { email: 'alice@example.com' },
  bob: { email: 'Bob@Corp.Example' },
  mallory: { email: 'mallory@evil.example' },
  eve: { email: 'eve@corp.example', emailVerified: false },
};
const STATIC_TOKEN = 'static-token-for-the-oidc-tests';

interface Setup {
  server: TestServer;
  provider: TestProvider;
  clientUrl: string;
  callbackPrefix: string;
}

/** A provider and a troupe in auth mode oidc that trusts it: alice listed, corp.example allowed. */
async function startBoth(carrier: 'uws' | 'node', oidc: { autoSignup?: boolean } = {}): Promise<Setup> {
  const port = await freePort();
  const clientUrl = `http://127.0.0.1:${port}`;
  const callbackPrefix = `${clientUrl}/api/v2/auth/oidc/callback`;
  const provider = await startTestProvider(callbackPrefix, ACCOUNTS);
  const server = await startTestServer(carrier, {
    port,
    auth: { mode: 'oidc', token: STATIC_TOKEN },
    oidc: {
      clientId: provider.clientId, clientSecret: provider.clientSecret, clientUrl, issuer: provider.issuer,
      scopes: ['openid', 'profile', 'email'], whitelist: ['alice@example.com'], allowedDomains: ['corp.example'],
      autoSignup: oidc.autoSignup ?? true, defaultRole: 'viewer',
    },
  });
  return { server, provider, clientUrl, callbackPrefix };
}

/** Begins a login at troupe, signs in at the provider as `login`: the callback's answer. */
async function logIn(setup: Setup, jar: CookieJar, login: string, query = ''): Promise<Hop> {
  const begun = await documented(await browse(jar, `${setup.server.base}/auth/oidc/login${query}`));
  assert.equal(begun.response.status, 302, begun.text);
  const callback = await signInAtProvider(jar, begun.response.headers.get('location')!, login, setup.callbackPrefix);
  return documented(await browse(jar, callback));
}

for (const carrier of ['uws', 'node'] as const) {
  describe(`OIDC login against a real provider on ${carrier}`, () => {
    let setup: Setup;
    before(async () => {
      setup = await startBoth(carrier);
    });
    after(async () => {
      await setup.server.close();
      await setup.provider.close();
    });

    test('the login redirects to the provider with PKCE, state and nonce, the login in progress in a sealed cookie', async () => {
      const jar = new CookieJar();
      const begun = await documented(await browse(jar, `${setup.server.base}/auth/oidc/login`));
      assert.equal(begun.response.status, 302);
      const to = new URL(begun.response.headers.get('location')!);
      assert.equal(`${to.origin}${to.pathname}`, `${setup.provider.issuer}/auth`);
      assert.equal(to.searchParams.get('client_id'), setup.provider.clientId);
      assert.equal(to.searchParams.get('redirect_uri'), setup.callbackPrefix);
      assert.equal(to.searchParams.get('response_type'), 'code');
      assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
      for (const name of ['state', 'nonce', 'code_challenge']) assert.ok((to.searchParams.get(name) ?? '').length >= 32, name);
      const cookie = begun.response.headers.getSetCookie().join('\n');
      assert.match(cookie, /^troupe_oidc=[^;]+; Max-Age=600; Path=\/api\/v2\/auth\/oidc; HttpOnly; SameSite=Lax$/);
      // Sealed: neither the state nor the nonce is readable in it.
      assert.ok(!cookie.includes(to.searchParams.get('state')!) && !cookie.includes(to.searchParams.get('nonce')!));
    });

    test('a whitelisted user logs in: a session cookie, a redirect to clientUrl, then the API answers 200 with the configured role', async () => {
      const jar = new CookieJar();
      const answered = await logIn(setup, jar, 'alice');
      assert.equal(answered.response.status, 302, answered.text);
      assert.equal(answered.response.headers.get('location'), `${setup.clientUrl}/`);
      const session = answered.response.headers.getSetCookie().find((line) => line.startsWith('troupe_session='));
      assert.match(session ?? '', /^troupe_session=[^;]+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
      // A browser's next request to troupe carries the cookie: the API serves it.
      const cookie = `troupe_session=${jar.get(setup.clientUrl, 'troupe_session')}`;
      const listed = await checkedFetch(`${setup.server.base}/dags`, { headers: { cookie } });
      assert.equal(listed.status, 200);
      assert.equal((await checkedFetch(`${setup.server.base}/dags`)).status, 401);
      // viewer (roleMapping.defaultRole): reads, but may not start a run.
      await setup.server.writeDag('oidc-hello', 'steps:\n  - name: s\n    command: echo hi\n');
      const started = await checkedFetch(`${setup.server.base}/dags/oidc-hello/start`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(started.status, 403);
      assert.equal((await started.json() as { code: string }).code, 'forbidden');
    });

    test('the user is created once, named by the email, with the configured role; a second login finds it', async () => {
      await logIn(setup, new CookieJar(), 'alice');
      const users = setup.server.troupe.auth.accounts.listUsers().filter((user) => user.username === 'alice@example.com');
      assert.equal(users.length, 1);
      assert.equal(users[0].role, 'viewer');
    });

    test('with format=json the callback answers {token, expiresAt, user}, and the token works as a Bearer token', async () => {
      const answered = await logIn(setup, new CookieJar(), 'bob', '?format=json');
      assert.equal(answered.response.status, 200, answered.text);
      const body = JSON.parse(answered.text) as { token: string; expiresAt: string; user: { username: string; role: string } };
      assert.equal(body.user.username, 'bob@corp.example');
      assert.equal(body.user.role, 'viewer');
      assert.ok(Date.parse(body.expiresAt) > Date.now());
      assert.equal((await checkedFetch(`${setup.server.base}/dags`, { headers: { authorization: `Bearer ${body.token}` } })).status, 200);
    });

    test('an account outside the whitelist and the allowed domains is refused with 403, and gets no session', async () => {
      const jar = new CookieJar();
      const answered = await logIn(setup, jar, 'mallory');
      assert.equal(answered.response.status, 403);
      assert.deepEqual(Object.keys(JSON.parse(answered.text)).sort(), ['code', 'message']);
      assert.equal(JSON.parse(answered.text).code, 'forbidden');
      assert.equal(jar.get(setup.clientUrl, 'troupe_session'), undefined);
      assert.ok(!setup.server.troupe.auth.accounts.listUsers().some((user) => user.username.startsWith('mallory')));
    });

    test('an allowed domain with an email the provider has not verified is refused with 403', async () => {
      const answered = await logIn(setup, new CookieJar(), 'eve');
      assert.equal(answered.response.status, 403);
      assert.match(JSON.parse(answered.text).message, /not verified/);
    });
  });
}

describe('OIDC callbacks that do not belong to a login in progress', () => {
  let setup: Setup;
  before(async () => {
    setup = await startBoth('node');
  });
  after(async () => {
    await setup.server.close();
    await setup.provider.close();
  });

  const expectUnauthorized = async (hop: Hop, message: RegExp) => {
    await documented(hop);
    assert.equal(hop.response.status, 401, hop.text);
    assert.equal(JSON.parse(hop.text).code, 'unauthorized');
    assert.match(JSON.parse(hop.text).message, message);
    assert.ok(hop.response.headers.get('www-authenticate'));
    assert.equal(hop.response.headers.getSetCookie().length, 0);
  };

  test('without the login cookie: 401', async () => {
    await expectUnauthorized(await browse(new CookieJar(), `${setup.callbackPrefix}?code=abc&state=xyz`), /no OIDC login in progress/);
  });

  test('with a state that is not the login\'s: 401, and the provider\'s code is not spent', async () => {
    const jar = new CookieJar();
    const begun = await browse(jar, `${setup.server.base}/auth/oidc/login`);
    const callback = new URL(await signInAtProvider(jar, begun.response.headers.get('location')!, 'alice', setup.callbackPrefix));
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged-state');
    await expectUnauthorized(await browse(jar, forged.href), /state does not match/);
    forged.searchParams.delete('state');
    await expectUnauthorized(await browse(jar, forged.href), /state does not match/);
    // The real callback still completes: the forged ones were refused before the code was used.
    assert.equal((await browse(jar, callback.href)).response.status, 302);
  });

  test('with a login cookie altered or from another login: 401', async () => {
    const jar = new CookieJar();
    const begun = await browse(jar, `${setup.server.base}/auth/oidc/login`);
    const state = new URL(begun.response.headers.get('location')!).searchParams.get('state');
    const sealed = jar.get(setup.clientUrl, 'troupe_oidc')!;
    const altered = `${sealed.slice(0, -4)}${sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const response = await checkedFetch(`${setup.callbackPrefix}?code=abc&state=${state}`, { headers: { cookie: `troupe_oidc=${altered}` }, redirect: 'manual' });
    await expectUnauthorized({ url: `${setup.callbackPrefix}?code=abc&state=${state}`, response, text: await response.text() }, /no OIDC login in progress/);
    // Another login's cookie: its state is not this one's.
    const other = new CookieJar();
    await browse(other, `${setup.server.base}/auth/oidc/login`);
    await expectUnauthorized(await browse(other, `${setup.callbackPrefix}?code=abc&state=${state}`), /state does not match/);
  });

  test('a login the user cancels at the provider: 401 naming the provider\'s error', async () => {
    const jar = new CookieJar();
    const begun = await browse(jar, `${setup.server.base}/auth/oidc/login`);
    const state = new URL(begun.response.headers.get('location')!).searchParams.get('state')!;
    const refused = `${setup.callbackPrefix}?error=access_denied&error_description=${encodeURIComponent('End-User aborted interaction')}&state=${state}&iss=${encodeURIComponent(setup.provider.issuer)}`;
    await expectUnauthorized(await browse(jar, refused), /access_denied/);
  });
});

describe('OIDC with autoSignup off', () => {
  let setup: Setup;
  before(async () => {
    setup = await startBoth('node', { autoSignup: false });
  });
  after(async () => {
    await setup.server.close();
    await setup.provider.close();
  });

  test('an admitted account without a user is refused with 403; once an admin creates the user of its email, it logs in with that user\'s role', async () => {
    const refused = await logIn(setup, new CookieJar(), 'alice');
    assert.equal(refused.response.status, 403);
    assert.match(JSON.parse(refused.text).message, /autoSignup is off/);
    await setup.server.troupe.auth.accounts.createUser({ username: 'alice@example.com', password: 'a password of length', role: 'operator' });
    const answered = await logIn(setup, new CookieJar(), 'alice', '?format=json');
    assert.equal(answered.response.status, 200, answered.text);
    assert.equal(JSON.parse(answered.text).user.role, 'operator');
  });
});

describe('OIDC with an issuer that cannot be reached', () => {
  let server: TestServer;
  let issuer: string;
  before(async () => {
    issuer = `http://127.0.0.1:${await freePort()}`;
    server = await startTestServer('node', {
      auth: { mode: 'oidc', token: STATIC_TOKEN, basic: { username: 'ops', password: 'static basic password' } },
      oidc: { clientId: 'troupe', clientSecret: 'secret', clientUrl: 'http://127.0.0.1:1', issuer, scopes: ['openid', 'email'], whitelist: [], allowedDomains: [], autoSignup: true, defaultRole: 'viewer' },
    });
  });
  after(() => server.close());

  test('troupe starts all the same; a login answers 502 bad_gateway naming the issuer', async () => {
    assert.equal((await server.call('GET', '/health')).status, 200);
    const begun = await documented(await browse(new CookieJar(), `${server.base}/auth/oidc/login`));
    assert.equal(begun.response.status, 502);
    assert.equal(JSON.parse(begun.text).code, 'bad_gateway');
    assert.match(JSON.parse(begun.text).message, new RegExp(`OIDC issuer ${issuer.replace(/\./g, '\\.')}/? cannot be discovered: .*ECONNREFUSED`));
    assert.ok(!begun.text.includes('secret'));
  });

  test('in auth mode oidc the static token and Basic credentials are accepted, and nothing else', async () => {
    assert.equal((await checkedFetch(`${server.base}/dags`, { headers: { authorization: `Bearer ${STATIC_TOKEN}` } })).status, 200);
    const basic = Buffer.from('ops:static basic password').toString('base64');
    assert.equal((await checkedFetch(`${server.base}/dags`, { headers: { authorization: `Basic ${basic}` } })).status, 200);
    assert.equal((await checkedFetch(`${server.base}/dags`, { headers: { authorization: 'Bearer not-the-token' } })).status, 401);
    assert.equal((await checkedFetch(`${server.base}/dags`)).status, 401);
  });
});

describe('OIDC configuration at start', () => {
  test('auth mode oidc without auth.oidc does not start, and says which settings are missing', async () => {
    await assert.rejects(startTestServer('node', { auth: { mode: 'oidc' } }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'bad_request');
      assert.match(error.message, /auth\.mode oidc needs auth\.oidc: clientId, issuer and clientUrl/);
      return true;
    });
  });

  test('without OIDC configured the OIDC routes answer 404', async () => {
    const server = await startTestServer('node');
    try {
      for (const path of ['/auth/oidc/login', '/auth/oidc/callback?code=a&state=b']) {
        const response = await server.call('GET', path);
        assert.equal(response.status, 404);
        assert.match(response.body.message, /OIDC login is not configured/);
      }
    } finally {
      await server.close();
    }
  });
});

describe('troupe start-all with OIDC from config.yaml and the environment', () => {
  test('auth.oidc without auth.mode selects mode oidc (as Dagu); a login gives a session the API accepts; the secret is never printed', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-oidc-cli-'));
    const port = await freePort();
    const clientUrl = `http://127.0.0.1:${port}`;
    const provider = await startTestProvider(`${clientUrl}/api/v2/auth/oidc/callback`, ACCOUNTS);
    await writeFile(join(home, 'config.yaml'), [
      'auth:', '  oidc:', `    clientId: ${provider.clientId}`, `    clientUrl: ${clientUrl}`, `    issuer: ${provider.issuer}`,
      '    whitelist: [alice@example.com]', '    roleMapping:', '      defaultRole: operator', '',
    ].join('\n'));
    const troupe = await startCli(['--home', home, '--port', String(port), '--http', 'node'], { TROUPE_AUTH_OIDC_CLIENT_SECRET: provider.clientSecret });
    try {
      const base = `${clientUrl}/api/v2`;
      assert.equal((await checkedFetch(`${base}/dags`)).status, 401);
      const jar = new CookieJar();
      const begun = await browse(jar, `${base}/auth/oidc/login?format=json`);
      assert.equal(begun.response.status, 302, begun.text);
      const callback = await signInAtProvider(jar, begun.response.headers.get('location')!, 'alice', `${base}/auth/oidc/callback`);
      const answered = await browse(jar, callback);
      assert.equal(answered.response.status, 200, answered.text);
      assert.equal(JSON.parse(answered.text).user.role, 'operator');
      const me = await checkedFetch(`${base}/auth/me`, { headers: { cookie: `troupe_session=${jar.get(clientUrl, 'troupe_session')}` } });
      assert.equal(me.status, 200);
      assert.ok(!troupe.output().includes(provider.clientSecret), troupe.output());
      assert.doesNotMatch(troupe.output(), /ignoring keys[^\n]*auth\.oidc/);
    } finally {
      troupe.child.kill('SIGTERM');
      await exited(troupe.child);
      await provider.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});

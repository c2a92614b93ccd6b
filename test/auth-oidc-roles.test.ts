// OIDC roles from the provider's groups and claims (roleMapping), end to end: a real provider
// (oidc-provider) on a loopback port whose accounts carry groups, troupe signing users in over
// HTTP, and what each user may then do through the API. The accounts' groups change between two
// sign-ins as an identity provider's admin would change them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, startCli } from './cli-process.ts';
import { checkedFetch, startTestServer, type TestServer } from './helpers.ts';
import { browse, CookieJar, documented, signInAtProvider, startTestProvider, type TestAccount, type TestProvider } from './support/oidc-provider.ts';
import { freePort } from './support/ports.ts';
import type { OidcSettings } from '../src/auth/index.ts';

type RoleMapping = NonNullable<OidcSettings['roleMapping']>;

const GROUPS: RoleMapping['groupMappings'] = { 'ops-admins': 'admin', 'cn=Leads,ou=Groups': 'manager', deployers: 'operator', readers: 'viewer' };

function accounts(): Record<string, TestAccount> {
  return {
    ann: { email: 'ann@corp.example', groups: { groups: ['readers', 'deployers', 'ops-admins'] } },
    dan: { email: 'dan@corp.example', groups: { groups: ['deployers'] } },
    lea: { email: 'lea@corp.example', groups: { groups: ['cn=Leads,ou=Groups'] } },
    kim: { email: 'kim@corp.example', groups: { groups: ['unmapped'] } },
    nog: { email: 'nog@corp.example' },
    pat: { email: 'pat@corp.example', groups: { groups: ['ops-admins'], realm_access: { roles: ['troupe-operator'] } } },
    mia: { email: 'mia@corp.example', groups: { realm_access: { roles: ['troupe-manager'] } } },
  };
}

interface Setup {
  server: TestServer;
  provider: TestProvider;
  accounts: Record<string, TestAccount>;
  callback: string;
}

async function startBoth(roleMapping: Partial<RoleMapping>): Promise<Setup> {
  const port = await freePort();
  const clientUrl = `http://127.0.0.1:${port}`;
  const callback = `${clientUrl}/api/v2/auth/oidc/callback`;
  const people = accounts();
  const provider = await startTestProvider(callback, people);
  const home = await mkdtemp(join(tmpdir(), 'troupe-oidc-roles-'));
  try {
    const server = await startTestServer('node', {
      port, home,
      auth: { mode: 'oidc' },
      oidc: {
        clientId: provider.clientId, clientSecret: provider.clientSecret, clientUrl, issuer: provider.issuer,
        scopes: ['openid', 'email', 'groups'], whitelist: [], allowedDomains: ['corp.example'], autoSignup: true, defaultRole: 'viewer',
        roleMapping: { groupsClaim: 'groups', groupMappings: {}, roleAttributeStrict: false, skipOrgRoleSync: false, ...roleMapping },
      },
    });
    return { server, provider, accounts: people, callback };
  } catch (error) {
    await provider.close();
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

async function stop(setup: Setup): Promise<void> {
  await setup.server.close();
  await setup.provider.close();
}

/** A server and provider of their own for `use`, stopped after it. */
async function withSetup(roleMapping: Partial<RoleMapping>, use: (setup: Setup) => Promise<void>): Promise<void> {
  const setup = await startBoth(roleMapping);
  try {
    await use(setup);
  } finally {
    await stop(setup);
  }
}

/** Signs in as `login` through the browser flow; the callback's JSON answer (token and user). */
async function signIn(setup: Setup, login: string): Promise<{ status: number; token?: string; role?: string; message?: string }> {
  const jar = new CookieJar();
  const begun = await browse(jar, `${setup.server.base}/auth/oidc/login?format=json`);
  assert.equal(begun.response.status, 302, begun.text);
  const answered = await documented(await browse(jar, await signInAtProvider(jar, begun.response.headers.get('location')!, login, setup.callback)));
  const body = JSON.parse(answered.text) as { token?: string; user?: { role: string }; message?: string };
  return { status: answered.response.status, token: body.token, role: body.user?.role, message: body.message };
}

/** The role a session acts with, found by what the API lets it do (no route here changes anything it may reach). */
async function mayAct(setup: Setup, token: string): Promise<string> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const allowed = async (method: string, path: string) => {
    const response = await checkedFetch(`${setup.server.base}${path}`, { method, headers, ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }) });
    assert.ok([200, 403, 404].includes(response.status), `${method} ${path}: ${response.status}`);
    return response.status !== 403;
  };
  if (await allowed('GET', '/users')) return 'admin';
  if (await allowed('DELETE', '/dags/no-such-dag')) return 'manager';
  if (await allowed('POST', '/dags/no-such-dag/start')) return 'operator';
  assert.ok(await allowed('GET', '/dags'));
  return 'viewer';
}

/** Signs in as `login`: the answer names `role`, and the session acts with it. */
async function expectRole(setup: Setup, login: string, role: string): Promise<void> {
  const signed = await signIn(setup, login);
  assert.equal(signed.role, role);
  assert.equal(await mayAct(setup, signed.token!), role);
}

function storedRole(setup: Setup, email: string): string | undefined {
  return setup.server.troupe.auth.accounts.listUsers().find((user) => user.username === email)?.role;
}

describe('OIDC roles from groupMappings', () => {
  let setup: Setup;
  before(async () => {
    setup = await startBoth({ groupMappings: GROUPS });
  });
  after(() => stop(setup));

  test('a user in a mapped group gets its role: operator runs DAGs but may not write them', async () => {
    const signed = await signIn(setup, 'dan');
    assert.equal(signed.status, 200, signed.message);
    assert.equal(signed.role, 'operator');
    assert.equal(await mayAct(setup, signed.token!), 'operator');
    const lea = await signIn(setup, 'lea');
    assert.equal(lea.role, 'manager', 'a group named as an LDAP DN maps as written');
    assert.equal(await mayAct(setup, lea.token!), 'manager');
  });

  test('a user in several mapped groups gets the most powerful role', async () => {
    await expectRole(setup, 'ann', 'admin');
  });

  test('a user in no mapped group, or with no groups claim, gets defaultRole', async () => {
    for (const login of ['kim', 'nog']) {
      const signed = await signIn(setup, login);
      assert.equal(signed.status, 200, signed.message);
      assert.equal(signed.role, 'viewer', login);
      assert.equal(await mayAct(setup, signed.token!), 'viewer', login);
    }
  });

  test('removed from a group, the user loses its role at the next sign-in, in the sessions issued before too; added back, gets it again', async () => {
    const before = await signIn(setup, 'dan');
    assert.equal(await mayAct(setup, before.token!), 'operator');
    setup.accounts.dan.groups = { groups: ['readers'] };
    const after = await signIn(setup, 'dan');
    assert.equal(after.role, 'viewer');
    assert.equal(storedRole(setup, 'dan@corp.example'), 'viewer');
    assert.equal(await mayAct(setup, after.token!), 'viewer');
    // The session of the first sign-in is not left with the old role.
    assert.equal(await mayAct(setup, before.token!), 'viewer');
    setup.accounts.dan.groups = { groups: ['deployers'] };
    assert.equal((await signIn(setup, 'dan')).role, 'operator');
    assert.equal(await mayAct(setup, before.token!), 'operator');
  });

  test('the mapping overrides a role an admin set, at the next sign-in', async () => {
    const admin = await signIn(setup, 'ann');
    assert.equal((await signIn(setup, 'kim')).role, 'viewer');
    const kim = setup.server.troupe.auth.accounts.listUsers().find((user) => user.username === 'kim@corp.example')!;
    const patched = await checkedFetch(`${setup.server.base}/users/${kim.id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' }, body: '{"role":"manager"}',
    });
    assert.equal(patched.status, 200);
    assert.equal(storedRole(setup, 'kim@corp.example'), 'manager');
    assert.equal((await signIn(setup, 'kim')).role, 'viewer');
  });
});

describe('OIDC roles from roleAttributePath', () => {
  let setup: Setup;
  before(async () => {
    setup = await startBoth({
      groupMappings: GROUPS,
      roleAttributePath: '.realm_access.roles // [] | if any(. == "troupe-manager") then "Manager" elif any(. == "troupe-operator") then "operator" else null end',
    });
  });
  after(() => stop(setup));

  test('the expression\'s role (in any case) is given', async () => {
    await expectRole(setup, 'mia', 'manager');
  });

  test('the expression comes before groupMappings, even when a group gives a more powerful role', async () => {
    await expectRole(setup, 'pat', 'operator');
  });

  test('when the expression gives no role, groupMappings decide, then defaultRole', async () => {
    assert.equal((await signIn(setup, 'ann')).role, 'admin');
    assert.equal((await signIn(setup, 'kim')).role, 'viewer');
  });

  test('the claim leaving the provider lowers the role at the next sign-in', async () => {
    assert.equal((await signIn(setup, 'mia')).role, 'manager');
    setup.accounts.mia.groups = { realm_access: { roles: [] } };
    await expectRole(setup, 'mia', 'viewer');
  });
});

describe('OIDC roles: roleAttributeStrict, skipOrgRoleSync, a nested groups claim', () => {
  test('roleAttributeStrict: an account nothing maps is refused (403) and gets no user; one that maps signs in', async () => {
    await withSetup({ groupMappings: GROUPS, roleAttributeStrict: true }, async (setup) => {
      const refused = await signIn(setup, 'kim');
      assert.equal(refused.status, 403);
      assert.match(refused.message!, /no role.*roleAttributeStrict/);
      assert.equal(storedRole(setup, 'kim@corp.example'), undefined);
      assert.equal((await signIn(setup, 'dan')).role, 'operator');
      // Out of every mapped group: the next sign-in is refused too.
      setup.accounts.dan.groups = { groups: [] };
      assert.equal((await signIn(setup, 'dan')).status, 403);
    });
  });

  test('skipOrgRoleSync: the role is mapped at the first sign-in only', async () => {
    await withSetup({ groupMappings: GROUPS, skipOrgRoleSync: true }, async (setup) => {
      assert.equal((await signIn(setup, 'dan')).role, 'operator');
      setup.accounts.dan.groups = { groups: ['ops-admins'] };
      assert.equal((await signIn(setup, 'dan')).role, 'operator');
    });
  });

  test('groupsClaim reaches into an object with dots (Keycloak\'s realm_access.roles), and takes a claim named with dots whole', async () => {
    await withSetup({ groupsClaim: 'realm_access.roles', groupMappings: { 'troupe-manager': 'manager' } }, async (setup) => {
      assert.equal((await signIn(setup, 'mia')).role, 'manager');
      assert.equal((await signIn(setup, 'dan')).role, 'viewer');
    });
    await withSetup({ groupsClaim: 'https://troupe.example/groups', groupMappings: { deployers: 'operator' } }, async (named) => {
      named.accounts.kim.groups = { 'https://troupe.example/groups': 'readers deployers' };
      assert.equal((await signIn(named, 'kim')).role, 'operator');
    });
  });

  test('a roleAttributePath jq cannot read: the server does not start, and says why', async () => {
    await assert.rejects(startBoth({ roleAttributePath: 'if .groups then "admin"' }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'bad_request');
      assert.match(error.message, /roleMapping\.roleAttributePath is not a jq expression jq can compile: jq: error: syntax error/);
      return true;
    });
  });
});

describe('troupe start-all with roleMapping from config.yaml and the environment', () => {
  const home = { dir: '' };
  before(async () => {
    home.dir = await mkdtemp(join(tmpdir(), 'troupe-oidc-roles-'));
  });
  after(() => rm(home.dir, { recursive: true, force: true }));

  const configYaml = (clientUrl: string, issuer: string, clientId: string, roleMapping: string[]) => [
    'auth:', '  oidc:', `    clientId: ${clientId}`, `    clientUrl: ${clientUrl}`, `    issuer: ${issuer}`,
    '    scopes: [openid, email, groups]', '    role_mapping:', ...roleMapping.map((line) => `      ${line}`), '',
  ].join('\n');

  test('group_mappings from the file, the expression from TROUPE_AUTH_OIDC_ROLE_ATTRIBUTE_PATH: a sign-in gets the mapped role', async () => {
    const port = await freePort();
    const clientUrl = `http://127.0.0.1:${port}`;
    const callback = `${clientUrl}/api/v2/auth/oidc/callback`;
    const people = accounts();
    const provider = await startTestProvider(callback, people);
    await writeFile(join(home.dir, 'config.yaml'), configYaml(clientUrl, provider.issuer, provider.clientId, ['group_mappings:', '  deployers: Operator', '  ops-admins: admin']));
    const troupe = await startCli(['--home', home.dir, '--port', String(port), '--http', 'node'], {
      TROUPE_AUTH_OIDC_CLIENT_SECRET: provider.clientSecret,
      TROUPE_AUTH_OIDC_ROLE_ATTRIBUTE_PATH: 'if (.realm_access.roles // [] | index("troupe-manager")) != null then "manager" else empty end',
    });
    try {
      const setup = { server: { base: `${clientUrl}/api/v2` }, callback } as unknown as Setup;
      assert.equal((await signIn(setup, 'dan')).role, 'operator');
      assert.equal((await signIn(setup, 'mia')).role, 'manager');
      assert.ok(!troupe.output().includes(provider.clientSecret));
    } finally {
      troupe.child.kill('SIGTERM');
      await exited(troupe.child);
      await provider.close();
    }
  });

  test('an unknown role in group_mappings, or an expression jq cannot read: troupe does not start, and names the setting', async () => {
    const issuer = `http://127.0.0.1:${await freePort()}`;
    await writeFile(join(home.dir, 'config.yaml'), configYaml('http://127.0.0.1:1', issuer, 'troupe', ['group_mappings:', '  devs: developer']));
    await assert.rejects(startCli(['--home', home.dir, '--port', '0', '--http', 'node'], { TROUPE_AUTH_OIDC_CLIENT_SECRET: 'a-secret-never-printed' }),
      (error: Error) => /roleMapping\.groupMappings: group "devs" must be one of admin, manager, operator, viewer, not "developer"/.test(error.message) && !error.message.includes('a-secret-never-printed'));
    await writeFile(join(home.dir, 'config.yaml'), configYaml('http://127.0.0.1:1', issuer, 'troupe', ['defaultRole: viewer']));
    await assert.rejects(startCli(['--home', home.dir, '--port', '0', '--http', 'node'], { TROUPE_AUTH_OIDC_CLIENT_SECRET: 'x', TROUPE_AUTH_OIDC_ROLE_ATTRIBUTE_PATH: '.groups | {{' }),
      (error: Error) => /roleAttributePath is not a jq expression/.test(error.message));
  });
});

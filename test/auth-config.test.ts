// The auth configuration (Dagu 1.30's keys and their TROUPE_ variables) as the command reads it,
// and the permission table of docs/auth.md, which must say what the route table does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../src/config/index.ts';
import { DEFAULT_PUBLIC_PATHS, roleAllows } from '../src/auth/index.ts';
import { apiRouter } from '../src/http/index.ts';

async function withConfig(text: string, env: Record<string, string>, check: (config: Awaited<ReturnType<typeof resolveConfig>>) => void | Promise<void>) {
  const home = await mkdtemp(join(tmpdir(), 'troupe-auth-config-'));
  try {
    await writeFile(join(home, 'config.yaml'), text);
    await check(await resolveConfig({ home }, env));
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

test('config.yaml auth and permissions, Dagu 1.30\'s keys', async () => {
  const yaml = [
    'auth:',
    '  mode: builtin',
    '  basic: {username: ops, password: basic-secret}',
    '  token: {value: static-secret}',
    '  builtin:',
    '    admin: {username: root, password: admin-secret}',
    '    token: {secret: signing-secret, ttl: 12h}',
    '  publicPaths: [/health, /dags/tags]',
    'permissions: {writeDAGs: false, runDAGs: true}',
  ].join('\n');
  await withConfig(yaml, {}, (config) => {
    assert.deepEqual(config.auth, {
      mode: 'builtin', basic: { username: 'ops', password: 'basic-secret' }, token: 'static-secret',
      admin: { username: 'root', password: 'admin-secret' }, tokenSecret: 'signing-secret', tokenTtlMs: 12 * 3_600_000,
      publicPaths: ['/health', '/dags/tags'], permissions: { writeDAGs: false, runDAGs: true },
    });
    assert.deepEqual(config.warnings, []);
  });
});

test('TROUPE_AUTH_* and TROUPE_PERMISSIONS_* win over the file; enabled: false turns static credentials off', async () => {
  const yaml = 'auth:\n  mode: none\n  basic: {enabled: false, username: a, password: b}\n  token: {value: t}\n';
  const env = {
    TROUPE_AUTH_MODE: 'builtin', TROUPE_AUTH_TOKEN: 'env-token', TROUPE_AUTH_ADMIN_PASSWORD: 'env-admin-password',
    TROUPE_AUTH_TOKEN_SECRET: 'env-secret', TROUPE_AUTH_TOKEN_TTL: '30m', TROUPE_AUTH_PUBLIC_PATHS: '/health, /queues',
    TROUPE_PERMISSIONS_RUN_DAGS: 'false',
  };
  await withConfig(yaml, env, (config) => {
    assert.deepEqual(config.auth, {
      mode: 'builtin', token: 'env-token', admin: { password: 'env-admin-password' }, tokenSecret: 'env-secret',
      tokenTtlMs: 30 * 60_000, publicPaths: ['/health', '/queues'], permissions: { runDAGs: false },
    });
  });
});

test('a wrong value is refused, naming the key and never a secret', async () => {
  await withConfig('auth:\n  mode: ldap\n', {}, () => assert.fail('accepted')).catch((error: Error) => assert.match(error.message, /auth\.mode must be one of none, builtin, oidc/));
  await withConfig('auth:\n  builtin:\n    token: {ttl: soon, secret: do-not-print}\n', {}, () => assert.fail('accepted')).catch((error: Error) => {
    assert.match(error.message, /auth\.builtin\.token\.ttl/);
    assert.ok(!error.message.includes('do-not-print'));
  });
  await withConfig('auth:\n  basic: [a]\n', {}, () => assert.fail('accepted')).catch((error: Error) => assert.match(error.message, /auth\.basic: must be a map/));
  await withConfig('permissions: {writeDAGs: maybe}\n', {}, () => assert.fail('accepted')).catch((error: Error) => assert.match(error.message, /permissions\.writeDAGs: must be true or false/));
  await withConfig('auth:\n  ldap: {}\n', {}, (config) => assert.deepEqual(config.warnings, ['config file: ignoring keys troupe does not use: auth.ldap']));
  await withConfig('', {}, (config) => assert.deepEqual(config.auth, { mode: 'none' }));
});

test('docs/auth.md: the permission table is the route table\'s', async () => {
  const page = await readFile(resolve(import.meta.dirname, '..', 'docs', 'auth.md'), 'utf8');
  const table = /<!-- permission-matrix:start -->\n([\s\S]*?)\n<!-- permission-matrix:end -->/.exec(page)?.[1];
  assert.ok(table, 'docs/auth.md has the table between its markers');
  const documented = table.split('\n').slice(2);
  const roles = ['viewer', 'operator', 'manager', 'admin'] as const;
  const expected = apiRouter().entries().map((route) => {
    const needs = route.public ? 'public' : DEFAULT_PUBLIC_PATHS.includes(route.pattern) ? `${route.permission} (public by default)` : route.permission!;
    const cells = roles.map((role) => (route.public || roleAllows(role, route.permission!) ? 'yes' : 'no'));
    return `| ${route.method} | ${route.pattern.replace(/:([A-Za-z]+)/g, '{$1}')} | ${needs} | ${cells.join(' | ')} |`;
  });
  assert.deepEqual(documented, expected);
});

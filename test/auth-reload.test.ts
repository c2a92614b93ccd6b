// SIGHUP to `troupe start-all` reads the auth settings again: a changed mode, static token or
// permission switch applies from the next request; settings that cannot be used leave the ones in
// force; sign-in attempt counts outlive the reload; nothing secret reaches the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedFetch, waitUntil } from './helpers.ts';
import { exited, startCli } from './cli-process.ts';

const FIRST = 'first-static-token-0123456789';
const SECOND = 'second-static-token-9876543210';
const ADMIN_PASSWORD = 'admin-password-for-reload';

test('SIGHUP reloads the auth settings: static token, mode, permissions; unusable ones are refused; sign-in counts stay', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-auth-reload-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const config = (text: string) => writeFile(join(home, 'config.yaml'), text);
  await config(`auth:\n  token:\n    value: ${FIRST}\n`);
  const { child, base, output } = await startCli(['--home', home, '--port', '0']);
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const status = async (path: string, token?: string, init: RequestInit = {}) =>
    (await checkedFetch(`${base}${path}`, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers ?? {}) } })).status;
  let reloads = 0;
  const reload = async (text: string, expect: RegExp) => {
    await config(text);
    const before = output().length;
    child.kill('SIGHUP');
    reloads++;
    assert.ok(await waitUntil(() => expect.test(output().slice(before)), 10_000), `reload ${reloads}: ${output().slice(before)}`);
  };
  const login = (password: string) => status('/auth/login', undefined, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });

  assert.equal(await status('/dags'), 401);
  assert.equal(await status('/dags', FIRST), 200);

  // Builtin mode, another static token, DAG writes switched off.
  await reload(`auth:\n  mode: builtin\n  builtin:\n    admin:\n      password: ${ADMIN_PASSWORD}\n  token:\n    value: ${SECOND}\npermissions:\n  writeDAGs: false\n`,
    /SIGHUP: queues reloaded: .*auth mode builtin/);
  assert.equal(await status('/dags', FIRST), 401);
  assert.equal(await status('/dags', SECOND), 200);
  assert.equal(await status('/dags', SECOND, { method: 'POST', body: JSON.stringify({ name: 'refused', spec: 'steps:\n  - echo hi\n' }) }), 403);
  assert.equal(await login(ADMIN_PASSWORD), 200, 'the first admin was made by the reload');

  // oidc mode with no auth.oidc cannot be used: the settings in force stay.
  await reload('auth:\n  mode: oidc\n', /SIGHUP: configuration not reloaded: auth\.mode oidc needs auth\.oidc/);
  assert.equal(await status('/dags', SECOND), 200);

  // Ten failed sign-ins lock the username; a reload with the same limits does not unlock it.
  for (let attempt = 0; attempt < 10; attempt++) assert.equal(await login('wrong-password'), 401);
  assert.equal(await login(ADMIN_PASSWORD), 429);
  await reload(`auth:\n  mode: builtin\n  token:\n    value: ${SECOND}\n`, /SIGHUP: queues reloaded: .*auth mode builtin/);
  assert.equal(await login(ADMIN_PASSWORD), 429);
  assert.equal(await status('/dags', SECOND, { method: 'POST', body: JSON.stringify({ name: 'allowed', spec: 'steps:\n  - echo hi\n' }) }), 201, 'writeDAGs is on again');

  // No auth at all: every request is served.
  await reload('', /SIGHUP: queues reloaded: .*auth mode none \(no credentials asked\)/);
  assert.equal(await status('/dags'), 200);

  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);
  for (const secret of [FIRST, SECOND, ADMIN_PASSWORD]) assert.ok(!output().includes(secret), 'no secret in the log');
});

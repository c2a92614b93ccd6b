// The dashboard with builtin authentication, in a real headless Chromium: a visitor without a
// session is sent to the sign-in page and back; each role sees only the actions it may take (a
// viewer no Start, Suspend, Stop, Retry or Save, an operator starts a DAG); an admin changes a
// custom queue's limit in place and manages users and API keys; a wrong password shows the API's
// message; with an OIDC provider, its sign-in is offered and ends on the dashboard, signed in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { bearer, send, signIn, type Credential } from './auth-support.ts';
import { launchBrowser, newContext, screenshot, signedInPage } from './support/browser.ts';
import { startTestProvider } from './support/oidc-provider.ts';
import { freePort } from './support/ports.ts';

const PASSWORD = 'ui-auth-password-1';

describe('the dashboard with authentication on', () => {
  let server: TestServer;
  let browser: Browser;
  let admin: Credential;
  let origin = '';
  let finishedRun = '';
  let runningRun = '';

  const signedIn = (username: string, next: string) => signedInPage(browser, origin, username, PASSWORD, next);

  before(async () => {
    server = await startTestServer('uws', {
      auth: { mode: 'builtin', admin: { username: 'ui-admin', password: PASSWORD } },
      queues: [{ name: 'ui-q', maxConcurrency: 2 }],
    });
    origin = new URL(server.base).origin;
    admin = bearer(await signIn(server, 'ui-admin', PASSWORD));
    for (const [username, role] of [['ui-viewer', 'viewer'], ['ui-operator', 'operator']]) {
      assert.equal((await send(server, 'POST', '/users', admin, { username, password: PASSWORD, role })).status, 201);
    }
    await server.writeDag('ui-hello', 'steps:\n  - name: greet\n    command: echo hello\n');
    await server.writeDag('ui-slow', 'steps:\n  - name: wait\n    command: sleep 30\n');
    finishedRun = (await send(server, 'POST', '/dags/ui-hello/start', admin, {})).body.dagRunId;
    runningRun = (await send(server, 'POST', '/dags/ui-slow/start', admin, {})).body.dagRunId;
    assert.ok(await waitUntil(async () => (await send(server, 'GET', `/dag-runs/ui-hello/${finishedRun}`, admin)).body.dagRunDetails.statusLabel === 'succeeded', 15_000));
    assert.ok(await waitUntil(async () => (await send(server, 'GET', `/dag-runs/ui-slow/${runningRun}`, admin)).body.dagRunDetails.statusLabel === 'running', 15_000));
    browser = await launchBrowser();
  });
  after(async () => {
    if (server && runningRun) await send(server, 'POST', `/dag-runs/ui-slow/${runningRun}/stop`, admin, {});
    await browser?.close();
    await server?.close();
  });

  test('without a session a page offers sign-in; a viewer signs in, lands back, and finds no Start, Suspend, Stop, Retry or Save, a read-only editor and no admin pages', async () => {
    const page = await (await newContext(browser)).newPage();
    await page.goto(`${origin}/`);
    await page.getByTestId('nav-sign-in').waitFor();
    // The page's own read was refused (401): its message links to the sign-in, back to this page.
    await page.goto(`${origin}/dags/ui-hello`);
    const link = page.getByTestId('sign-in-link').first();
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), '/login?next=%2Fdags%2Fui-hello');
    await link.click();
    await page.getByTestId('login-form').waitFor();
    await screenshot(page, 'login');
    await page.getByTestId('login-username').fill('ui-viewer');
    await page.getByTestId('login-password').fill(PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(`${origin}/dags/ui-hello`);
    assert.match(await page.getByTestId('signed-in-user').innerText(), /ui-viewer\s+viewer/);

    // The DAG page: its details and definition, read-only, and no action.
    await page.getByTestId('dag-details').waitFor();
    const editor = page.getByTestId('spec-editor');
    await editor.waitFor();
    assert.equal(await editor.getAttribute('readonly'), '');
    await page.getByTestId('spec-read-only').waitFor();
    for (const testId of ['start-button-ui-hello', 'suspend-button-ui-hello', 'save-spec', 'nav-users', 'nav-api-keys']) {
      assert.equal(await page.getByTestId(testId).count(), 0, testId);
    }

    await page.getByTestId('nav-dags').click();
    await page.getByTestId('dag-row-ui-hello').waitFor();
    assert.equal(await page.locator('[data-testid^="start-button-"], [data-testid^="suspend-button-"]').count(), 0);

    // A finished run (Retry for an operator) and a running one (Stop).
    await page.goto(`${origin}/runs/ui-hello/${finishedRun}`);
    await page.locator('[data-testid="run-status"][data-status="succeeded"]').waitFor();
    await page.goto(`${origin}/runs/ui-slow/${runningRun}`);
    await page.locator('[data-testid="run-status"][data-status="running"]').waitFor();
    for (const testId of ['stop-button', 'retry-button', 'dequeue-button']) assert.equal(await page.getByTestId(testId).count(), 0, testId);
    await page.goto(`${origin}/users`);
    await page.getByTestId('admins-only').waitFor();

    // Signing out ends the browser's session: the next page asks for a sign-in again.
    await page.getByTestId('sign-out').click();
    await page.waitForURL(`${origin}/login`);
    await page.getByTestId('nav-sign-in').waitFor();
    assert.equal((await page.context().cookies()).filter((c) => c.name === 'troupe_session').length, 0);
    await page.close();
  });

  test('an operator sees Start and starts a DAG, and may not edit its definition; a session ended elsewhere offers the sign-in again', async () => {
    const page = await signedIn('ui-operator', '/dags/ui-hello');
    assert.equal(await page.getByTestId('spec-editor').getAttribute('readonly'), '');
    assert.equal(await page.getByTestId('save-spec').count(), 0);
    await page.getByTestId('start-button-ui-hello').click();
    await page.waitForURL(/\/runs\/ui-hello\/[^/]+$/);
    const dagRunId = page.url().split('/').pop()!;
    assert.notEqual(dagRunId, finishedRun);
    await page.locator('[data-testid="run-status"][data-status="succeeded"]').waitFor({ timeout: 15_000 });
    await page.getByTestId('retry-button').waitFor();
    assert.equal((await send(server, 'GET', `/dag-runs/ui-hello/${dagRunId}`, admin)).body.dagRunDetails.statusLabel, 'succeeded');

    // A session ended elsewhere (an admin resets the password): the next refused read offers the
    // sign-in, and the navigation and actions follow.
    const operatorId = (await send(server, 'GET', '/users', admin)).body.users.find((u: { username: string }) => u.username === 'ui-operator').id;
    assert.equal((await send(server, 'POST', `/users/${operatorId}/reset-password`, admin, { newPassword: 'ui-auth-password-2' })).status, 200);
    await page.getByTestId('nav-dags').click();
    assert.equal(await page.getByTestId('sign-in-link').first().getAttribute('href'), '/login?next=%2Fdags');
    await page.getByTestId('nav-sign-in').waitFor();
    assert.equal(await page.getByTestId('signed-in-user').count(), 0);
    await page.close();
  });

  test('an admin changes a custom queue\'s limit in place (a refused one shows why), manages users and creates and revokes an API key', async () => {
    const page = await signedIn('ui-admin', '/queues');
    const limit = page.getByTestId('queue-limit-ui-q');
    await limit.waitFor();
    assert.equal(await limit.inputValue(), '2');
    await limit.fill('0');
    await page.getByTestId('queue-limit-save-ui-q').click();
    assert.match(await page.getByTestId('queue-limit-error-ui-q').innerText(), /maxConcurrency/);
    await limit.fill('5');
    await page.getByTestId('queue-limit-save-ui-q').click();
    const limitOf = async () => (await send(server, 'GET', '/queues', admin)).body.queues.find((q: { name: string }) => q.name === 'ui-q').maxConcurrency;
    assert.ok(await waitUntil(async () => await limitOf() === 5), `limit ${await limitOf()}`);
    await page.getByTestId('queue-limit-save-ui-q').and(page.locator(':disabled')).waitFor();
    await screenshot(page, 'queues');

    await page.getByTestId('nav-users').click();
    await page.getByTestId('users-table').waitFor();
    await page.getByTestId('user-create-username').fill('ui-made');
    await page.getByTestId('user-create-password').fill(PASSWORD);
    await page.getByTestId('user-create-role').selectOption('manager');
    await page.getByTestId('user-create-submit').click();
    await page.getByTestId('user-row-ui-made').waitFor();
    await page.getByTestId('user-role-ui-made').selectOption('operator');
    await page.getByTestId('users-note').getByText('ui-made is now operator').waitFor();
    const users = async () => (await send(server, 'GET', '/users', admin)).body.users as { username: string; role: string }[];
    assert.equal((await users()).find((u) => u.username === 'ui-made')?.role, 'operator');
    await screenshot(page, 'users');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('user-delete-ui-made').click();
    await page.getByTestId('user-row-ui-made').waitFor({ state: 'detached' });
    assert.equal((await users()).some((u) => u.username === 'ui-made'), false);

    await page.getByTestId('nav-api-keys').click();
    await page.getByTestId('api-key-create-name').fill('ui-key');
    await page.getByTestId('api-key-create-role').selectOption('operator');
    await page.getByTestId('api-key-create-submit').click();
    const key = await page.getByTestId('api-key-new').inputValue();
    assert.match(key, /^troupe_/);
    await page.getByTestId('api-keys-table').getByTestId('api-key-row-ui-key').waitFor();
    await screenshot(page, 'api-keys');
    // The key shown works, with its role.
    assert.equal((await send(server, 'GET', '/auth/me', bearer(key))).body.user.role, 'operator');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('api-key-revoke-ui-key').click();
    await page.getByTestId('api-key-row-ui-key').waitFor({ state: 'detached' });
    assert.equal((await send(server, 'GET', '/auth/me', bearer(key))).status, 401);
    await page.close();
  });

  test('a wrong password shows the API\'s message and signs nobody in', async () => {
    const page = await (await newContext(browser)).newPage();
    await page.goto(`${origin}/login`);
    await page.getByTestId('login-username').fill('ui-viewer');
    await page.getByTestId('login-password').fill('not-the-password');
    await page.getByTestId('login-submit').click();
    assert.equal(await page.getByTestId('login-error').innerText(), 'Invalid username or password');
    assert.equal(new URL(page.url()).pathname, '/login');
    assert.equal(await page.getByTestId('signed-in-user').count(), 0);
    await page.close();
  });

  test('with an OIDC provider, the sign-in page offers it, and its sign-in ends on the dashboard signed in with the configured role', async () => {
    const port = await freePort();
    const provider = await startTestProvider(`http://127.0.0.1:${port}/api/v2/auth/oidc/callback`, { alice: { email: 'alice@example.com' } });
    const oidc = await startTestServer('uws', {
      port, auth: { mode: 'oidc' },
      oidc: {
        scopes: ['openid', 'email'], whitelist: [], allowedDomains: [], autoSignup: true, defaultRole: 'operator',
        clientId: provider.clientId, clientSecret: provider.clientSecret, clientUrl: `http://127.0.0.1:${port}`, issuer: provider.issuer,
      },
    });
    try {
      const page = await (await newContext(browser)).newPage();
      await page.goto(`http://127.0.0.1:${port}/login`);
      await page.getByTestId('login-oidc').click();
      // The provider's own pages: its login form (any password), then its consent.
      await page.locator('input[name="login"]').fill('alice');
      await page.locator('input[name="password"]').fill('any password');
      await page.locator('button[type="submit"]').click();
      await page.locator('button[type="submit"]').click();
      await page.waitForURL(`http://127.0.0.1:${port}/`);
      assert.match(await page.getByTestId('signed-in-user').innerText(), /alice@example\.com\s+operator/);
      await page.getByTestId('dags-empty').or(page.getByTestId('dags-table')).first().waitFor();
      // And without OIDC, no such link.
      const plain = await (await newContext(browser)).newPage();
      const asked = plain.waitForResponse((response) => response.url().endsWith('/api/v2/auth/methods'));
      await plain.goto(`${origin}/login`);
      assert.equal((await (await asked).json()).oidc, false);
      await plain.getByTestId('login-form').waitFor();
      assert.equal(await plain.getByTestId('login-oidc').count(), 0);
    } finally {
      await oidc.close();
      await provider.close();
    }
  });
});

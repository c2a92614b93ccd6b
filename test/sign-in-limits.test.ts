// The sign-in limits hold under a burst: attempts sent at once count as the same attempts sent one
// after another, at POST /auth/login, with Basic credentials and at change-password. And what a
// client without credentials sends is bounded: an overlong username is refused before it is counted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.ts';
import { basic, bearer, send, signIn, type Answer } from './auth-support.ts';

const PASSWORD = 'burst-password-1';
const statusesOf = (answers: Answer[]) => answers.map((answer) => answer.status);
const count = (statuses: number[], status: number) => statuses.filter((each) => each === status).length;

describe('a burst of sign-ins for one username', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('uws', { auth: { mode: 'builtin', admin: { username: 'b-admin', password: PASSWORD }, loginLimits: { perUser: 3, perAddress: 1000, windowSec: 600 } } });
  });
  after(() => server.close());

  test('200 at once, the right password among them: only the limit\'s worth of passwords is checked, and the right one is refused', async () => {
    const attempts = Array.from({ length: 200 }, (_, i) => {
      const password = i === 100 ? PASSWORD : `wrong-${i}-password`;
      // Login and Basic credentials, mixed: both check a password under the same limits.
      return i % 2 === 0 ? send(server, 'POST', '/auth/login', undefined, { username: 'b-admin', password }) : send(server, 'GET', '/dags', basic('b-admin', password));
    });
    const statuses = statusesOf(await Promise.all(attempts));
    assert.equal(count(statuses, 401), 3, `answers: ${JSON.stringify(statuses)}`);
    assert.equal(statuses[100], 429, 'the right password, sent in the burst past the limit');
    assert.equal(count(statuses, 429), 197);
    assert.equal((await send(server, 'POST', '/auth/login', undefined, { username: 'b-admin', password: PASSWORD })).status, 429);
  });
});

describe('a burst of sign-ins from one address', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node', { auth: { mode: 'builtin', admin: { username: 'a-admin', password: PASSWORD }, loginLimits: { perUser: 1000, perAddress: 6, windowSec: 600 } } });
  });
  after(() => server.close());

  test('200 at once under as many usernames: only the address\'s limit of passwords is checked', async () => {
    const statuses = statusesOf(await Promise.all(Array.from({ length: 200 }, (_, i) =>
      send(server, 'POST', '/auth/login', undefined, { username: `a-user-${i}`, password: 'wrong-password' }))));
    assert.equal(count(statuses, 401), 6, `answers: ${JSON.stringify(statuses)}`);
    assert.equal(count(statuses, 429), 194);
  });
});

describe('the current password at change-password', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node', { auth: { mode: 'builtin', admin: { username: 'c-admin', password: PASSWORD }, loginLimits: { perUser: 3, perAddress: 1000, windowSec: 600 } } });
  });
  after(() => server.close());

  test('is checked under the sign-in limits: a stolen session cannot guess it', async () => {
    const session = bearer(await signIn(server, 'c-admin', PASSWORD));
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      send(server, 'POST', '/auth/change-password', session, { currentPassword: `guess-${i}-password`, newPassword: 'new-password-123' })));
    assert.equal(count(statusesOf(guesses), 401), 3);
    assert.equal(count(statusesOf(guesses), 429), 17);
    const right = await send(server, 'POST', '/auth/change-password', session, { currentPassword: PASSWORD, newPassword: 'new-password-123' });
    assert.equal(right.status, 429);
  });
});

describe('what a client without credentials sends is bounded', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node', { auth: { mode: 'builtin', admin: { username: 'm-admin', password: PASSWORD } } });
  });
  after(() => server.close());

  test('a 1 MB username or password is refused with 400 and never counted', async () => {
    const huge = 'u'.repeat(1_000_000);
    for (const body of [{ username: huge, password: 'wrong-password' }, { username: 'm-admin', password: huge }]) {
      const answer = await send(server, 'POST', '/auth/login', undefined, body);
      assert.equal(answer.status, 400, answer.text.slice(0, 200));
      assert.equal(answer.body.code, 'bad_request');
    }
    assert.match((await send(server, 'POST', '/auth/login', undefined, { username: 'u'.repeat(65), password: 'wrong-password' })).body.message, /username must not have more than 64 characters/);
    assert.deepEqual(server.troupe.auth.signInCounts(), { users: 0, addresses: 0 });
  });

  test('a long username in Basic credentials (no schema reads them) is counted under a digest, in at most two slots', async () => {
    const long = 'v'.repeat(8000);
    for (let i = 0; i < 5; i++) assert.equal((await send(server, 'GET', '/dags', basic(`${long}${i}`, 'wrong-password'))).status, 401);
    const counts = server.troupe.auth.signInCounts();
    assert.ok(counts.users >= 1 && counts.users <= 10 && counts.addresses >= 1 && counts.addresses <= 2, JSON.stringify(counts));
  });
});

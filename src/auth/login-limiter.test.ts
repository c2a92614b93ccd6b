import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../core/index.ts';
import { LoginLimiter } from './login-limiter.ts';

const LIMITS = { perUser: 3, perAddress: 5, windowSec: 600 };
const refused = (error: unknown) => error instanceof AppError && error.code === 'too_many_requests';

test('attempts made at once are counted before any is answered: past the limit the next is refused', async () => {
  const limiter = new LoginLimiter(LIMITS);
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => limiter.attempt('ann', '10.0.0.1')));
  assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 3);
  assert.ok(outcomes.every((outcome) => outcome.status === 'fulfilled' || refused(outcome.reason)));
  await assert.rejects(limiter.check('ann', '10.0.0.2'), refused);
});

test('an attempt refused for its username does not count against the address; a success gives its point back', async () => {
  const limiter = new LoginLimiter(LIMITS);
  for (let i = 0; i < 3; i++) await limiter.attempt('locked', '10.0.0.1');
  for (let i = 0; i < 10; i++) await assert.rejects(limiter.attempt('locked', '10.0.0.1'), refused);
  await limiter.attempt('bob', '10.0.0.1');
  await limiter.succeeded('bob', '10.0.0.1');
  // 3 failures of `locked` and none else: 2 more are allowed from the address.
  await limiter.attempt('carol', '10.0.0.1');
  await limiter.attempt('dave', '10.0.0.1');
  await assert.rejects(limiter.attempt('erin', '10.0.0.1'), refused);
});

test('however many usernames and addresses are tried, the counts kept stay within the slots', async () => {
  const limiter = new LoginLimiter({ perUser: 1000, perAddress: 1000, windowSec: 600 }, 16);
  for (let i = 0; i < 2000; i++) await limiter.attempt(`user-${i}-${'x'.repeat(200)}`, `10.${i >> 8}.${i & 255}.1`);
  const counts = limiter.counts();
  assert.ok(counts.users <= 16 && counts.addresses <= 16, JSON.stringify(counts));
});

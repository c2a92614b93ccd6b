import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attemptId, uuidv7 } from './ids.ts';

test('run ids drawn over many refills of the random pool are distinct, ordered UUIDv7s', () => {
  const now = Date.now();
  const ids = Array.from({ length: 10_000 }, () => uuidv7(now));
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids, 'ids made in the same millisecond keep their order');
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  // The random part differs between ids: no two share their last 12 hex digits.
  assert.equal(new Set(ids.map((id) => id.slice(-12))).size, ids.length);
});

test('attempt ids are 6 hex digits, and vary', () => {
  const attempts = Array.from({ length: 2_000 }, () => attemptId());
  for (const id of attempts) assert.match(id, /^[0-9a-f]{6}$/);
  assert.ok(new Set(attempts).size > 1_990, 'collisions among 2,000 draws of 24 bits are rare');
});

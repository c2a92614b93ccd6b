import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from './duration.ts';

test('Go-style durations are read; a bare number, zero, a negative or a word is a problem', () => {
  assert.deepEqual(parseDuration('1h'), { ms: 3_600_000 });
  assert.deepEqual(parseDuration('30m'), { ms: 1_800_000 });
  assert.deepEqual(parseDuration('1h30m'), { ms: 5_400_000 });
  assert.deepEqual(parseDuration('90s'), { ms: 90_000 });
  for (const bad of ['', 'bogus', '10', '0s', '-1h', 'h']) assert.ok('problem' in parseDuration(bad), bad);
});

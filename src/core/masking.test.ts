import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MASK, createMasker } from './masking.ts';

test('secrets are masked longest first, at every occurrence; empty ones are ignored', () => {
  const mask = createMasker(['abc', 'abcdef', '', 'abc']);
  assert.equal(mask('abcdef abc xabcdefx abc'), `${MASK} ${MASK} x${MASK}x ${MASK}`);
  assert.equal(createMasker([])('nothing to hide'), 'nothing to hide');
});

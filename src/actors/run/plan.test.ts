import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outputKeyOf } from './plan.ts';

test('output keys: upper snake case becomes camelCase; other names stay', () => {
  assert.deepEqual(['TOTAL_COUNT', 'GREETING', 'A_B_C', 'myVar', 'url', '_LEAD'].map(outputKeyOf), ['totalCount', 'greeting', 'aBC', 'myVar', 'url', 'lead']);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outputKeyOf } from './plan.ts';

test('output keys: upper snake case becomes camelCase; other names stay', () => {
  // As Dagu 1.30.2 writes them (checked on its binary): a name's own capitals are not kept.
  assert.deepEqual(['TOTAL_COUNT', 'GREETING', 'A_B_C', 'myVar', 'url', '_LEAD', 'jsonList', 'fooBar_baz', 'XMLThing', 'A__B', 'Mixed_Case'].map(outputKeyOf),
    ['totalCount', 'greeting', 'aBC', 'myvar', 'url', 'lead', 'jsonlist', 'foobarBaz', 'xmlthing', 'aB', 'mixedCase']);
});

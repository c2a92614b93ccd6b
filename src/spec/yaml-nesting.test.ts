import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flowNestingTooDeep } from './yaml-nesting.ts';

test('nesting past the limit is found, with its line', () => {
  assert.equal(flowNestingTooDeep('['.repeat(4), 3), 1);
  assert.equal(flowNestingTooDeep(`a: 1\nb: ${'{x: '.repeat(4)}`, 3), 2);
  assert.equal(flowNestingTooDeep(`${'['.repeat(3)}${']'.repeat(3)}[[[`, 3), undefined);
});

test('brackets in quoted text and comments do not count; quotes inside plain text do not hide brackets', () => {
  assert.equal(flowNestingTooDeep(`a: "${'['.repeat(10)}\\" ${'['.repeat(10)}"\nb: '${'{'.repeat(10)}'' ${'['.repeat(10)}'`, 3), undefined);
  assert.equal(flowNestingTooDeep(`a: 1 # ${'['.repeat(10)}\nb: 2`, 3), undefined);
  // An apostrophe within a word opens nothing: the brackets after it nest for the parser too.
  assert.equal(flowNestingTooDeep(`[it's ${'['.repeat(10)}`, 3), 1);
  assert.equal(flowNestingTooDeep(`a#b ${'['.repeat(10)}`, 3), 1);
});

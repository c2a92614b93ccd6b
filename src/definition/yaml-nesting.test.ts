import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nestingTooDeep } from './yaml-nesting.ts';

test('flow nesting past the limit is found, with its line', () => {
  assert.equal(nestingTooDeep('['.repeat(4), 3), 1);
  assert.equal(nestingTooDeep(`a: 1\nb: ${'{x: '.repeat(3)}`, 3), 2);
  // The document's own level counts as one: three brackets open four levels.
  assert.equal(nestingTooDeep(`${'['.repeat(3)}${']'.repeat(3)}[[[`, 4), undefined);
});

test('block nesting past the limit is found: compact sequences and indentation', () => {
  assert.equal(nestingTooDeep(`a: 1\n${'- '.repeat(4)}x`, 3), 2);
  assert.equal(nestingTooDeep(`${'? '.repeat(4)}x`, 3), 1);
  assert.equal(nestingTooDeep(['a:', ' b:', '  c:', '   d: 1'].join('\n'), 3), 4);
  assert.equal(nestingTooDeep(['a:', ' b:', '  c: 1', 'd:', ' e:', '  f: 1'].join('\n'), 3), undefined);
  assert.equal(nestingTooDeep('steps:\n  - name: a\n    command: x\n  - - b\n', 4), undefined);
});

test('brackets in quoted text and comments do not count; quotes inside plain text do not hide brackets', () => {
  assert.equal(nestingTooDeep(`a: "${'['.repeat(10)}\\" ${'['.repeat(10)}"\nb: '${'{'.repeat(10)}'' ${'['.repeat(10)}'`, 3), undefined);
  assert.equal(nestingTooDeep(`a: 1 # ${'['.repeat(10)}\nb: 2`, 3), undefined);
  // An apostrophe within a word opens nothing: the brackets after it nest for the parser too.
  assert.equal(nestingTooDeep(`[it's ${'['.repeat(10)}`, 3), 1);
  assert.equal(nestingTooDeep(`a#b ${'['.repeat(10)}`, 3), 1);
});

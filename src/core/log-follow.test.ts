import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LONGEST_HELD_LINE, LogLineSplitter } from './log-follow.ts';

test('lines keep the file offset after them; a character cut between two reads is decoded whole', () => {
  const splitter = new LogLineSplitter(100);
  const bytes = Buffer.from('ab\ncé\nxy');
  // Cut inside é (two bytes).
  const first = splitter.push(bytes.subarray(0, 5));
  const second = splitter.push(bytes.subarray(5));
  assert.deepEqual(first, [{ text: 'ab', end: 103 }]);
  assert.deepEqual(second, [{ text: 'cé', end: 107 }]);
  assert.deepEqual(splitter.end(), { text: 'xy', end: 109 });
  assert.equal(splitter.end(), undefined);
});

test('a line longer than what is held is given as it stands, cut before a character it splits', () => {
  const splitter = new LogLineSplitter(0);
  const long = Buffer.concat([Buffer.alloc(LONGEST_HELD_LINE, 'a'), Buffer.from('€').subarray(0, 2)]);
  const lines = splitter.push(long);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].end, LONGEST_HELD_LINE);
  assert.equal(lines[0].text, 'a'.repeat(LONGEST_HELD_LINE));
  assert.deepEqual(splitter.push(Buffer.from('€').subarray(2)), []);
  assert.deepEqual(splitter.end(), { text: '€', end: LONGEST_HELD_LINE + 3 });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDotenv } from './dotenv.ts';

test('dotenv lines: export prefixes, comments, quotes and escapes; other lines are problems', () => {
  const text = [
    '# settings',
    'PLAIN=value # a comment',
    'export EXPORTED=yes',
    "SINGLE='no $expansion # kept'",
    'DOUBLE="line\\nnext \\"quoted\\""',
    'SPACED = padded ',
    'EMPTY=',
    '',
    'not an assignment',
  ].join('\n');
  assert.deepEqual(parseDotenv(text), {
    entries: [
      ['PLAIN', 'value'], ['EXPORTED', 'yes'], ['SINGLE', 'no $expansion # kept'], ['DOUBLE', 'line\nnext "quoted"'],
      ['SPACED', 'padded'], ['EMPTY', ''],
    ],
    problems: ['line 9: not a KEY=value assignment'],
  });
});

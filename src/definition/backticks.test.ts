import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backtickCommands, substituteBackticks } from './backticks.ts';

test('backtick commands are found in order and replaced by their outputs; escaped and unclosed ones stay text', () => {
  const text = 'day `date +%u`, user `id -un`, literal \\`not\\` and `unclosed';
  assert.deepEqual(backtickCommands(text), ['date +%u', 'id -un']);
  assert.equal(substituteBackticks(text, ['5', 'root']), 'day 5, user root, literal `not` and `unclosed');
  assert.deepEqual(backtickCommands('no commands'), []);
});

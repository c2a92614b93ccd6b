import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paramsFromText } from '../../definition/index.ts';
import { childStarts, itemsOf, paramsText, type SubDagCall } from './sub-dag.ts';

const call = (overrides: Partial<SubDagCall> = {}): SubDagCall => ({
  target: 'child', step: 'fan',
  parent: { name: 'parent', dagRunId: 'run-1', root: { name: 'parent', dagRunId: 'run-1' }, callers: [], specText: '' },
  ...overrides,
});

test('items that give the same child params share one child; without params an item is $1', () => {
  const starts = childStarts(call(), {}, ['a', 'b', 'a', { k: 1 }]);
  assert.deepEqual(starts.map(({ params, shown }) => [params, shown]), [['{"1":"a"}', 'a'], ['{"1":"b"}', 'b'], ['{"1":"{\\"k\\":1}"}', '{"k":1}']]);
  const withParams = childStarts(call({ params: 'X=${ITEM}' }), {}, ['a', 'a', 'b c']);
  // An item with a space stays one value of X.
  assert.deepEqual(withParams.map(({ params }) => params), ['X=a', 'X="b c"']);
});

test('call params expand value by value: a value with spaces, quotes or backslashes stays whole; JSON text is expanded whole', () => {
  const env = { MSG: 'Received FromRoot', Q: 'say "hi" \\ $HOME', EMPTY: '' };
  const [start] = childStarts(call({ params: 'MSG=${MSG} QUOTED=${Q} E=${EMPTY} "${MSG}" plain' }), env, undefined);
  assert.equal(start.params, 'MSG="Received FromRoot" QUOTED="say \\"hi\\" \\\\ \\$HOME" E= "Received FromRoot" plain');
  assert.deepEqual(paramsFromText(start.params), [
    { name: 'MSG', value: 'Received FromRoot' }, { name: 'QUOTED', value: 'say "hi" \\ $HOME' }, { name: 'E', value: '' }, { value: 'Received FromRoot' }, { value: 'plain' },
  ]);
  const [json] = childStarts(call({ params: '{"MSG": "${MSG}"}' }), env, undefined);
  assert.equal(json.params, '{"MSG": "Received FromRoot"}');
});

test('child ids derive from the parent, the step, its execution and the params', () => {
  const [first] = childStarts(call({ params: 'X=1' }), {}, undefined);
  assert.equal(childStarts(call({ params: 'X=1' }), {}, undefined)[0].dagRunId, first.dagRunId);
  assert.match(first.dagRunId, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  for (const other of [call({ params: 'X=2' }), call({ params: 'X=1', step: 'other' }), call({ params: 'X=1', execution: 1 }),
    call({ params: 'X=1', parent: { ...call().parent, dagRunId: 'run-2' } })]) {
    assert.notEqual(childStarts(other, {}, undefined)[0].dagRunId, first.dagRunId);
  }
});

test('secrets enter an id masked; distinct params that mask alike still get distinct ids', () => {
  const parent = { ...call().parent, secrets: ['s3cret', 'other'] };
  const starts = childStarts(call({ params: 'T=${ITEM}', parent }), {}, ['s3cret', 'other', 's3cret']);
  assert.equal(starts.length, 2);
  assert.notEqual(starts[0].dagRunId, starts[1].dagRunId);
  const unmasked = childStarts(call({ params: 'T=${ITEM}' }), {}, ['s3cret'])[0].dagRunId;
  assert.notEqual(starts[0].dagRunId, unmasked, 'the id is not the one the secret itself gives');
});

test('a result\'s params: KEY=value and positional N=value, unquoted, in order', () => {
  assert.equal(paramsText([{ name: 'A', value: '1' }, { value: 'x' }, { name: 'B', value: 'two words' }, { value: 'y' }]), 'A=1 1=x B=two words 2=y');
  assert.equal(paramsText([]), '');
});

test('parallel items from a variable: a JSON list is its items, a JSON object one item (as Dagu takes it), other text its words', () => {
  const env = { LIST: '["a", {"k": 1}]', OBJ: '{"a": 1, "b": "x y"}', WORDS: 'one two  three', EMPTY: ' ' };
  assert.deepEqual(itemsOf('${LIST}', env), ['a', { k: 1 }]);
  assert.deepEqual(itemsOf('${OBJ}', env), [{ a: 1, b: 'x y' }]);
  assert.deepEqual(itemsOf('${WORDS}', env), ['one', 'two', 'three']);
  assert.deepEqual(itemsOf('${EMPTY}', env), []);
});

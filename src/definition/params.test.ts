import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeParams, paramsFromRequest, paramsJson } from './params.ts';
import { expandVariables, evaluateEnv, filterSystemEnv } from './expand.ts';

test('request params accept JSON object, JSON array and KEY=value text', () => {
  assert.deepEqual(paramsFromRequest('{"NAME":"api","N":2}'), [{ name: 'NAME', value: 'api' }, { name: 'N', value: '2' }]);
  assert.deepEqual(paramsFromRequest('["NAME=arr","pos"]'), [{ name: 'NAME', value: 'arr' }, { value: 'pos' }]);
  assert.deepEqual(paramsFromRequest('NAME=raw X="a b"'), [{ name: 'NAME', value: 'raw' }, { name: 'X', value: 'a b' }]);
  assert.throws(() => paramsFromRequest('{oops'), /not valid JSON/);
});

test('overrides replace defaults by name and by position; the JSON text keys positionals by number', () => {
  const merged = mergeParams([{ name: 'NAME', value: 'world' }, { value: 'p1' }], [{ name: 'NAME', value: 'api' }, { value: 'q1' }, { value: 'q2' }]);
  assert.deepEqual(JSON.parse(paramsJson(merged)), { NAME: 'api', 1: 'q1', 2: 'q2' });
});

test('expansion replaces known names only; env sees earlier entries', () => {
  assert.equal(expandVariables('a ${X} $X $Y ${1}', (n) => ({ X: 'x', '1': 'one' })[n]), 'a x x $Y one');
  assert.deepEqual(evaluateEnv([['A', 'one'], ['B', '${A}-two']], {}), { A: 'one', B: 'one-two' });
});

test('only the allowed system variables reach a step', () => {
  assert.deepEqual(
    filterSystemEnv({ PATH: '/bin', HOME: '/root', SECRET: 'x', TROUPE_X: '1', LC_ALL: 'C', DAG_Y: 'y', NODE_OPTIONS: 'z' }),
    { PATH: '/bin', HOME: '/root', TROUPE_X: '1', LC_ALL: 'C', DAG_Y: 'y' },
  );
});

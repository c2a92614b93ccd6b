import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppError } from '../core/index.ts';
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

test('a name that is no variable name, or that steers a shell, the loader or an interpreter, refuses the request naming it', () => {
  assert.throws(() => paramsFromRequest('{"BASH_ENV":"/x","PATH":"/y","OK":"1","a-b":"2"}'),
    (error: AppError) => error.code === 'bad_request' && /"BASH_ENV", "PATH": reserved/.test(error.message) && /"a-b": not a variable name/.test(error.message) && !error.message.includes('OK'));
  assert.throws(() => paramsFromRequest('"BASH_FUNC_f%%=() { id; }"'), /"BASH_FUNC_f%%": not a variable name/);
  assert.throws(() => paramsFromRequest('["LD_PRELOAD=/x.so"]'), /"LD_PRELOAD": reserved/);
  assert.throws(() => paramsFromRequest('TROUPE_HOME=/x'), /reserved/);
  assert.doesNotThrow(() => paramsFromRequest('{"ld_preload":"x","PATHS":"y","1":"z"}'));
  // Words that do not read as a name are positional values, as before.
  assert.deepEqual(paramsFromRequest('--flag=x 1=one https://h/?a=b'), [{ value: '--flag=x' }, { value: '1=one' }, { value: 'https://h/?a=b' }]);
});

test('a refusal lists at most ten names of a long list, each at most 64 characters', () => {
  const names = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`LD_${'x'.repeat(100)}${i}`, '1']));
  assert.throws(() => paramsFromRequest(JSON.stringify(names)), (error: AppError) => error.message.length < 1200 && /and 4990 more/.test(error.message));
});

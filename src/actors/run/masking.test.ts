import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskParams, maskResult, maskText } from './masking.ts';

const SECRETS = ['hunter2'];

test('every text of a result that reaches the record is masked', () => {
  assert.deepEqual(maskResult({ kind: 'ok', exitCode: 1, output: 'pw hunter2', error: 'failed: hunter2' }, SECRETS),
    { kind: 'ok', exitCode: 1, output: 'pw *******', error: 'failed: *******' });
  assert.deepEqual(maskResult({ kind: 'error', code: 'env_failed', message: '`echo hunter2` failed' }, SECRETS),
    { kind: 'error', code: 'env_failed', message: '`echo *******` failed' });
  assert.deepEqual(maskResult({ kind: 'skipped', message: '"x" is "hunter2"' }, SECRETS), { kind: 'skipped', message: '"x" is "*******"' });
});

test('params are masked value by value; without secrets everything is returned as it is', () => {
  assert.deepEqual(maskParams([{ name: 'PW', value: 'hunter2' }, { value: 'plain' }], SECRETS), [{ name: 'PW', value: '*******' }, { value: 'plain' }]);
  const result = { kind: 'ok' as const, exitCode: 0, output: 'hunter2' };
  assert.equal(maskResult(result, []), result);
  assert.equal(maskText('hunter2', []), 'hunter2');
});

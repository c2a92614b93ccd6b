import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContinueOn } from '../../core/index.ts';
import { failureContinues } from './continue-on.ts';

const on = (fields: Partial<ContinueOn>): ContinueOn => ({ failure: false, skipped: false, exitCode: [], output: [], markSuccess: false, ...fields });

test('a failure continues on failure, a listed exit code, or output matching a substring or a regex', () => {
  const failed = { kind: 'ok' as const, exitCode: 3, error: 'exit status 3', output: 'WARN: disk at 91%' };
  assert.equal(failureContinues(undefined, failed), false);
  assert.equal(failureContinues(on({ failure: true }), { kind: 'error', code: 'spawn_failed', message: 'x' }), true);
  assert.equal(failureContinues(on({ exitCode: [1, 3] }), failed), true);
  assert.equal(failureContinues(on({ exitCode: [1] }), failed), false);
  assert.equal(failureContinues(on({ output: ['disk at'] }), failed), true);
  assert.equal(failureContinues(on({ output: ['re:^WARN: disk at 9[0-9]%$'] }), failed), true);
  assert.equal(failureContinues(on({ output: ['re:^ERROR'] }), failed), false);
  assert.equal(failureContinues(on({ skipped: true }), failed), false, 'skipped is not a failure');
});

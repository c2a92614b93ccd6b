import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RepeatPolicy, RetryPolicy, StepResult } from '../../core/index.ts';
import { shouldRepeat, shouldRetry, waitMs } from './policies.ts';

const ok: StepResult = { kind: 'ok', exitCode: 0 };
const exit = (code: number): StepResult => ({ kind: 'ok', exitCode: code, error: `exit status ${code}` });
const retry = (fields: Partial<RetryPolicy>): RetryPolicy => ({ limit: 2, intervalSec: 1, exitCode: [], ...fields });
const repeat = (fields: Partial<RepeatPolicy>): RepeatPolicy => ({ repeat: 'while', exitCode: [], intervalSec: 1, ...fields });

test('retries: failed executions while retries remain, filtered by exit code', () => {
  assert.equal(shouldRetry(retry({}), exit(1), 0), true);
  assert.equal(shouldRetry(retry({}), exit(1), 2), false, 'the limit is reached');
  assert.equal(shouldRetry(retry({}), ok, 0), false);
  assert.equal(shouldRetry(retry({ exitCode: [75] }), exit(1), 0), false);
  assert.equal(shouldRetry(retry({ exitCode: [75] }), exit(75), 0), true);
  assert.equal(shouldRetry(retry({}), { kind: 'error', code: 'spawn_failed', message: 'x' }, 0), true);
  assert.equal(shouldRetry(undefined, exit(1), 0), false);
});

test('repeats: while and until, on a condition, on exit codes, or always; limits and failures end them', () => {
  assert.equal(shouldRepeat(repeat({}), ok, 1), true, 'while with nothing to test repeats');
  assert.equal(shouldRepeat(repeat({ limit: 3 }), ok, 3), false);
  assert.equal(shouldRepeat(repeat({ condition: '$X' }), ok, 1, true), true);
  assert.equal(shouldRepeat(repeat({ condition: '$X' }), ok, 1, false), false);
  assert.equal(shouldRepeat(repeat({ repeat: 'until', condition: '$X', expected: 'done' }), ok, 1, false), true);
  assert.equal(shouldRepeat(repeat({ repeat: 'until', condition: '$X', expected: 'done' }), ok, 1, true), false);
  assert.equal(shouldRepeat(repeat({ exitCode: [1] }), exit(1), 1), true, 'while the exit code matches, failures included');
  assert.equal(shouldRepeat(repeat({ exitCode: [1] }), ok, 1), false);
  assert.equal(shouldRepeat(repeat({ repeat: 'until', exitCode: [0] }), exit(3), 1), true);
  assert.equal(shouldRepeat(repeat({ repeat: 'until', exitCode: [0] }), ok, 1), false);
  assert.equal(shouldRepeat(repeat({}), exit(2), 1), false, 'a failure ends a repeat that does not test exit codes');
});

test('waits grow by the backoff per attempt and stop at the cap', () => {
  assert.deepEqual([0, 1, 2, 3].map((attempt) => waitMs({ intervalSec: 1 }, attempt)), [1000, 1000, 1000, 1000]);
  assert.deepEqual([0, 1, 2, 3].map((attempt) => waitMs({ intervalSec: 1, backoff: 2 }, attempt)), [1000, 2000, 4000, 8000]);
  assert.deepEqual([0, 1, 2, 3].map((attempt) => waitMs({ intervalSec: 2, backoff: 1.5, maxIntervalSec: 4 }, attempt)), [2000, 3000, 4000, 4000]);
});

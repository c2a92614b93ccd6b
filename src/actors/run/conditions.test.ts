import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StepResult } from '../../core/index.ts';
import { checkConditions } from './conditions.ts';

/** Commands answer from a table: exit code and output (a reference is the shell's to expand, from the env). */
const probe = async (command: string, env: Record<string, string>): Promise<StepResult> => {
  const table: Record<string, [number, string]> = { 'test -f /x': [1, ''], 'echo ${MODE}': [0, env.MODE ?? ''], 'true': [0, ''] };
  const [exitCode, output] = table[command] ?? [127, ''];
  return { kind: 'ok', exitCode, output, ...(exitCode ? { error: `exit status ${exitCode}` } : {}) };
};

test('commands must exit 0, conditions compare with expected or a regex, negate inverts, the first failure decides', async () => {
  const env = { MODE: 'prod' };
  assert.deepEqual(await checkConditions([{ command: 'true', negate: false }], env, probe), { holds: true });
  assert.deepEqual(await checkConditions([{ command: 'test -f /x', negate: false }], env, probe),
    { holds: false, message: 'precondition not met: `test -f /x` exited with 1' });
  assert.deepEqual(await checkConditions([{ command: 'test -f /x', negate: true }], env, probe), { holds: true });
  assert.deepEqual(await checkConditions([{ condition: '`echo $MODE`', expected: 're:^pr', negate: false }], env, probe), { holds: true });
  assert.deepEqual(await checkConditions([{ condition: '$MODE', expected: 'dev', error: 'dev only', negate: false }], env, probe),
    { holds: false, message: 'dev only' });
  assert.deepEqual(await checkConditions([{ condition: 'true', negate: false }, { condition: '$MODE', expected: 'x', negate: false }], env, probe),
    { holds: false, message: 'precondition not met: "$MODE" is "prod", expected "x"' }, 'a condition without expected runs as a command');
});

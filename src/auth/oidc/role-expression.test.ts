import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JqRunner } from '../../executors/index.ts';
import { RoleExpression } from './role-expression.ts';

describe('roleAttributePath on jq', () => {
  const jq = new JqRunner();
  after(() => jq.close());

  test('an expression jq compiles passes the check without running; one it cannot is bad_request with jq\'s words', async () => {
    await new RoleExpression('if (.groups | contains(["admins"])) then "admin" else "viewer" end', jq).check();
    // Never run at the check: a loop, or a claim it would fail on, is no problem there.
    await new RoleExpression('def f: f; f', jq).check();
    await new RoleExpression('.groups[0] | ascii_downcase # a comment', jq).check();
    for (const [text, message] of [['if .a then "admin"', /syntax error/], ['.groups | no_such_function', /no_such_function\/0 is not defined/], ['$nope', /\$nope is not defined/]] as const) {
      await assert.rejects(new RoleExpression(text, jq).check(), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'bad_request');
        assert.match(error.message, /roleAttributePath is not a jq expression jq can compile: jq: error: /);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /if false then/);
        return true;
      });
    }
  });

  test('the first result is the answer, as Dagu takes it; jq\'s // binds before |', async () => {
    const claims = { groups: ['admins', 'devs'], email: 'a@admin.example.com' };
    assert.deepEqual(await new RoleExpression('.groups[]', jq).evaluate(claims), { kind: 'value', value: 'admins' });
    assert.deepEqual(await new RoleExpression('if (.email | endswith("@admin.example.com")) then "admin" else "viewer" end', jq).evaluate(claims), { kind: 'value', value: 'admin' });
    assert.deepEqual(await new RoleExpression('.realm_access.roles // [] | length', jq).evaluate(claims), { kind: 'value', value: 0 });
    assert.deepEqual(await new RoleExpression('"operator", error("after the first")', jq).evaluate(claims), { kind: 'value', value: 'operator' });
    assert.deepEqual(await new RoleExpression('.nothing', jq).evaluate(claims), { kind: 'value', value: null });
    assert.deepEqual(await new RoleExpression('empty', jq).evaluate(claims), { kind: 'none' });
  });

  test('an error is told without the claims\' values; a loop is stopped at the time limit', async () => {
    const failed = await new RoleExpression('.email | contains(["x"])', jq).evaluate({ email: 'alice@example.com' });
    assert.equal(failed.kind, 'error');
    assert.doesNotMatch(failed.kind === 'error' ? failed.message : '', /alice/);
    const started = Date.now();
    assert.deepEqual(await new RoleExpression('def f: f; f', jq, 300).evaluate({}), { kind: 'error', message: 'stopped after 300 ms' });
    assert.ok(Date.now() - started < 5_000);
    // The next evaluation gets a new thread.
    assert.deepEqual(await new RoleExpression('"viewer"', jq).evaluate({}), { kind: 'value', value: 'viewer' });
  });
});

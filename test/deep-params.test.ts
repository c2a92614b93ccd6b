// Regression (found by the fuzz suite): params whose JSON nests deeply (`{"A":[[[...]]]}`, 10 KB)
// answered 500 on start and inline runs: a nested value is kept as its JSON text, and writing it
// back overflowed the stack. Such params are refused with 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedServer } from './helpers.ts';

const server = sharedServer('node', { fx: 'steps:\n  - "true"\n' });

test('params nested too deeply to write back are refused with 400', async () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  for (const params of [deep, `{"A":${deep}}`]) {
    for (const [path, body] of [['/dags/fx/start', { params }], ['/dag-runs', { params, name: 'inl', spec: 'steps:\n  - "true"\n' }]] as const) {
      const { status, body: answer } = await server.call('POST', path, body);
      assert.equal(status, 400, path);
      assert.equal(answer.code, 'bad_request');
      assert.match(answer.message, /params/);
    }
  }
  // Nesting a client uses is kept as JSON text.
  const { status, body } = await server.call('POST', '/dags/fx/start', { params: '{"A":[[1,{"b":2}]]}' });
  assert.equal(status, 200);
  const run = await server.waitForRun('fx', body.dagRunId);
  assert.equal(JSON.parse(run.params).A, '[[1,{"b":2}]]');
});

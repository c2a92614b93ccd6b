import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runJqProgram } from './jq-program.ts';

test('results print as indented JSON with sorted keys, or raw and compact', async () => {
  assert.deepEqual(await runJqProgram('{"b": 1, "a": [1]}', '., .a[0]', false), { kind: 'ok', stdout: '{\n    "a": [\n        1\n    ],\n    "b": 1\n}\n1' });
  assert.deepEqual(await runJqProgram('["  x", {"b": 1, "a": 2}, null]', '.[]', true), { kind: 'ok', stdout: '  x\n{"a":2,"b":1}\nnull' });
});

test('an error after some results fails the program (jq-wasm\'s raw() reports the results as a success)', async () => {
  assert.deepEqual(await runJqProgram('[1, 2, 3]', '.[] | if . == 2 then error("two") else . end', false), { kind: 'error', message: 'jq: error (at /dev/stdin:0): two' });
  assert.deepEqual(await runJqProgram('[1]', '.[0], ("bye\\n" | halt_error)', false), { kind: 'error', message: 'bye' });
});

test('a compile error quotes the filter as written; halt ends with the results so far; a comment on the last line is harmless', async () => {
  const compile = await runJqProgram('{}', '.a |', false);
  assert.equal(compile.kind, 'error');
  assert.match(compile.kind === 'error' ? compile.message : '', /line 1:\n\.a \| {3}\njq: 1 compile error$/);
  assert.deepEqual(await runJqProgram('[1, 2]', '.[0], halt, .[1]', false), { kind: 'ok', stdout: '1' });
  assert.deepEqual(await runJqProgram('[1, 2]', '.[] # the items', false), { kind: 'ok', stdout: '1\n2' });
  assert.deepEqual(await runJqProgram('[1, 2]', 'empty', false), { kind: 'ok', stdout: '' });
});

test('a thread runs jq hundreds of times (jq-wasm\'s raw() left 3 KB on the WebAssembly stack a call and failed an assertion from its 316th)', async () => {
  for (let run = 1; run <= 400; run++) {
    const answer = await runJqProgram(`{"run": ${run}}`, run % 2 === 0 ? '.run' : '.run | error("odd")', false);
    assert.deepEqual(answer, run % 2 === 0 ? { kind: 'ok', stdout: `${run}` } : { kind: 'error', message: `jq: error (at /dev/stdin:0): odd` }, `run ${run}`);
  }
});

test('jq\'s exit status decides, as for the jq command; only the newline after the last result is dropped', async () => {
  assert.deepEqual(await runJqProgram('[1, 2]', '.[0], ({"why": "no"} | halt_error(1))', false), { kind: 'error', message: '{"why":"no"}' });
  assert.deepEqual(await runJqProgram('[1, 2]', '.[0], ("done\\n" | halt_error(0))', false), { kind: 'ok', stdout: '1' });
  assert.deepEqual(await runJqProgram('"a\\n\\n"', '., .', true), { kind: 'ok', stdout: 'a\n\n\na\n\n' });
});

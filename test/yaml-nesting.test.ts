// Regression (found by the fuzz suite): a spec of 50,000 `[` (50 KB, far under the body limit), or
// of 100,000 `- ` (compact nested sequences), made the YAML parser recurse to the edge of the
// stack, where V8 compiling a regular expression aborts the whole process ("RegExpCompiler
// Allocation failed"); at other depths it answered with the text of a RangeError. Collections
// nested deeper than a definition ever needs are refused before parsing, with a message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedServer } from './helpers.ts';

const server = sharedServer('node');

test('deeply nested collections are a definition error, and the server stays up', async () => {
  const deep = ['['.repeat(10_000), '['.repeat(50_000), '{a: '.repeat(50_000), `${'['.repeat(100_000)}${']'.repeat(100_000)}`, `steps: ${'['.repeat(300_000)}`,
    `${'- '.repeat(5_000)}x`, `steps:\n  ${'- '.repeat(100_000)}x`, `${'? '.repeat(100_000)}x`, Array.from({ length: 1_400 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')];
  for (const spec of deep) {
    const validated = await server.call('POST', '/dags/validate', { spec });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.valid, false);
    assert.match(validated.body.errors.join(' '), /nest/);
    assert.doesNotMatch(validated.body.errors.join(' '), /call stack/);
    const created = await server.call('POST', '/dags', { name: 'deep', spec });
    assert.equal(created.status, 400);
    assert.equal((await server.call('GET', '/health')).status, 200);
  }
});

test('nesting a definition uses, and brackets inside quoted text, are not refused', async () => {
  const spec = `steps:\n  - name: a\n    command: echo "${'['.repeat(3000)}" '${'{'.repeat(3000)}'\n    env: [[{X: [[1]]}]]\n  - - - "true"\n`;
  const validated = await server.call('POST', '/dags/validate', { spec });
  assert.equal(validated.status, 200);
  assert.doesNotMatch(validated.body.errors.join(' '), /nest/);
});

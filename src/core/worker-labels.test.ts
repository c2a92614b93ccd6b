import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLabels, workerIdProblem } from './worker-labels.ts';

test('a worker id is 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit', () => {
  for (const good of ['w1', 'gpu-box_1.eu', 'x'.repeat(64)]) assert.equal(workerIdProblem(good), undefined, good);
  for (const bad of ['', 'a:b', '-x', '.x', 'a b', 'host@123', 'x'.repeat(65)]) assert.match(workerIdProblem(bad) ?? '', /^worker id ".*" must be 1 to 64 letters/, bad);
});

test('labels: k=v pairs, comma-separated; a pair without a key or an = is named', () => {
  assert.deepEqual(parseLabels('gpu=true, region=eu-1,,empty='), { gpu: 'true', region: 'eu-1', empty: '' });
  assert.deepEqual(parseLabels(''), {});
  assert.throws(() => parseLabels('gpu'), /^Error: label "gpu" must be key=value$/);
  assert.throws(() => parseLabels('=x'), /label "=x" must be key=value/);
  assert.throws(() => parseLabels('a=1,a=2'), /label a is given twice/);
});

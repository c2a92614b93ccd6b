// Which finished runs a worker removes its copies of: the oldest beyond its limit, sub DAG runs
// first; a retried run counts as new; a run under way again is not touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeptRuns, type RunName } from './kept-runs.ts';

const run = (name: string, dagRunId: string): RunName => ({ name, dagRunId });

test('the oldest trees beyond the limit go, each sub DAG run before its caller; a retried tree is newest again', async () => {
  const forgotten: string[][] = [];
  const active = new Set<string>();
  const kept = new KeptRuns(2, async (runs) => { forgotten.push(runs.map((one) => one.dagRunId)); }, (key) => active.has(key));
  kept.finished('a', [run('p', 'a'), run('child', 'a-1')]);
  kept.finished('b', [run('p', 'b')]);
  kept.finished('a', [run('p', 'a'), run('child', 'a-1')]); // a retry of a: b is now the oldest
  kept.finished('c', [run('p', 'c')]);
  await kept.idle();
  assert.deepEqual(forgotten, [['b']]);
  active.add('a');
  kept.finished('d', [run('p', 'd')]);
  await kept.idle();
  assert.deepEqual(forgotten, [['b']], 'a run under way again keeps its files');
  kept.finished('e', [run('p', 'e')]);
  await kept.idle();
  assert.deepEqual(forgotten, [['b'], ['c']]);
});

test('keep 0 removes each tree as it ends, sub DAG runs first; a failed removal is logged and the next goes on', async () => {
  const forgotten: string[][] = [];
  let first = true;
  const kept = new KeptRuns(0, async (runs) => {
    if (first) {
      first = false;
      throw new Error('disk gone');
    }
    forgotten.push(runs.map((one) => one.dagRunId));
  }, () => false);
  kept.finished('a', [run('p', 'a')]);
  kept.finished('b', [run('p', 'b'), run('child', 'b-1'), run('grandchild', 'b-2')]);
  await kept.idle();
  assert.deepEqual(forgotten, [['b-2', 'b-1', 'b']]);
});

// The DAG catalog while the directory watch runs: it trusts what it read and checks only the page a
// listing shows. No watcher runs here, so nothing but that check can see a file rewritten in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Definitions } from '../src/catalog/definitions.ts';
import { DagFiles } from '../src/store/index.ts';

test('a page found stale by verify is listed afresh at once, though no watcher told of the change', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-catalog-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const dags = new DagFiles(dir);
  const { listing: catalog } = new Definitions(dags);
  catalog.setWatched(true);
  await writeFile(join(dir, 'a.yaml'), 'description: before\nsteps:\n  - echo hi\n');
  await writeFile(join(dir, 'b.yaml'), 'steps:\n  - echo hi\n');
  const first = await catalog.entries();
  assert.equal(first[0].dag?.description, 'before');
  // In place, a different size: the directory's entries do not move.
  await writeFile(join(dir, 'a.yaml'), 'description: rewritten by hand\nsteps:\n  - echo hi\n');
  const trusted = await catalog.entries();
  assert.equal(trusted, first, 'while watched, a listing with no change told is the one before');
  assert.equal(await catalog.verify([trusted[0]]), false);
  const again = await catalog.entries();
  assert.equal(again[0].dag?.description, 'rewritten by hand');
  assert.equal(await catalog.verify([again[0]]), true);
});

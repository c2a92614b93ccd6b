// The directory watch on a real temporary directory: which entries are DAG files, one change per
// burst of events, and the rescan as a safety net.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DagsWatcher } from './dags-watcher.ts';

async function until(check: () => boolean): Promise<boolean> {
  for (let waited = 0; waited < 5_000 && !check(); waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  return check();
}

test('DAG files written, replaced by a rename or removed are reported once per burst; other entries are not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-watch-'));
  const changes: string[] = [];
  const watcher = new DagsWatcher({ dir, onChange: (fileName) => changes.push(fileName), onRescan: () => {}, settleMs: 30 });
  watcher.start();
  try {
    await writeFile(join(dir, 'written.yaml'), 'steps:\n  - echo 1\n');
    await writeFile(join(dir, 'written.yaml'), 'steps:\n  - echo 2\n');
    // The way DagFiles writes: a temporary name beside the file, renamed over it.
    await writeFile(join(dir, 'renamed.yml.123.abc.tmp'), 'steps:\n  - echo hi\n');
    await rename(join(dir, 'renamed.yml.123.abc.tmp'), join(dir, 'renamed.yml'));
    await writeFile(join(dir, 'notes.txt'), 'not a DAG');
    await writeFile(join(dir, 'bad name!.yaml'), 'steps:\n  - echo hi\n');
    assert.ok(await until(() => changes.length >= 2));
    await rm(join(dir, 'written.yaml'));
    assert.ok(await until(() => changes.length >= 3));
    assert.deepEqual(changes.sort(), ['renamed', 'written', 'written']);
  } finally {
    watcher.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('the rescan runs on its own, the watch going on', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-watch-'));
  let rescans = 0;
  const changes: string[] = [];
  const watcher = new DagsWatcher({ dir, onChange: (fileName) => changes.push(fileName), onRescan: () => rescans++, rescanEveryMs: 20, settleMs: 5 });
  watcher.start();
  try {
    assert.ok(await until(() => rescans >= 2));
    await writeFile(join(dir, 'later.yaml'), 'steps:\n  - echo hi\n');
    assert.ok(await until(() => changes.length === 1));
    assert.deepEqual(changes, ['later']);
  } finally {
    watcher.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a directory that cannot be watched is said once, and the rescan still runs', async () => {
  const lines: string[] = [];
  let rescans = 0;
  const watcher = new DagsWatcher({ dir: join(tmpdir(), 'troupe-no-such-dir', String(process.pid)), onChange: () => {}, onRescan: () => rescans++, rescanEveryMs: 20, log: (line) => lines.push(line) });
  watcher.start();
  try {
    assert.ok(await until(() => rescans >= 1));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^troupe: cannot watch the DAGs directory \(.*ENOENT.*\); files changed by hand are found by a rescan every 0.02 s$/);
  } finally {
    watcher.close();
  }
});

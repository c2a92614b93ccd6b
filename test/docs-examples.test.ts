// the embedding example of docs/events.md runs as written, on a fresh home, with
// the package as a user imports it (`import ... from 'troupe'`, the built dist/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

test('docs/events.md: the embedding example runs as written and prints the run\'s events and status 4', () => {
  assert.ok(existsSync(join(root, 'dist', 'index.js')), 'the package is built (npm ci builds it)');
  const page = readFileSync(join(root, 'docs', 'events.md'), 'utf8');
  const example = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(example?.includes("from 'troupe'"), 'the page has the example');
  // Inside the package, `import 'troupe'` resolves to the package itself, as it does for a user.
  const file = join(root, 'test', `.events-example-${process.pid}.mjs`);
  writeFileSync(file, example!);
  try {
    const run = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /type: 'run\.running'/);
    assert.match(run.stdout, /type: 'step\.succeeded'/);
    assert.match(run.stdout, /type: 'run\.succeeded'/);
    assert.match(run.stdout.trim(), /\n4$/, 'the status printed last');
  } finally {
    rmSync(file, { force: true });
  }
});

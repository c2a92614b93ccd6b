// The home is private: another user of the machine reads nothing of the store (which holds the
// session signing secret) nor of the logs. Checked as that user would: `runuser -u nobody`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, startCli } from './cli-process.ts';
import { startTestServer } from './helpers.ts';

/** Whether the user `nobody` can read the file: what another local account gets. */
function nobodyReads(path: string): boolean {
  const result = spawnSync('runuser', ['-u', 'nobody', '--', 'cat', path], { encoding: 'utf8' });
  if (result.error) throw result.error;
  return result.status === 0;
}

const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);

/** A parent every user may pass through (as a home directory under /home usually is), holding the home. */
async function openParent(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), 'troupe-private-'));
  await chmod(parent, 0o755);
  t.after(() => rm(parent, { recursive: true, force: true }));
  return parent;
}

test('a new home: another user reads neither the store nor the logs', async (t) => {
  const home = join(await openParent(t), 'home');
  const server = await startTestServer('uws', { home });
  try {
    await server.writeDag('private_hello', 'steps:\n  - echo secret-output\n');
    const run = await server.startAndWait('private_hello');
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(await mode(home), '700');
    assert.equal(await mode(join(home, 'data')), '700');
    assert.equal(await mode(join(home, 'logs')), '700');
    assert.equal(await mode(join(home, 'data', 'data.mdb')), '600');
    // Even with the home opened up, the store and the logs stay out of reach.
    await chmod(home, 0o755);
    assert.equal(nobodyReads(join(home, 'data', 'data.mdb')), false, 'data.mdb is private');
    const logs = await readdir(join(home, 'logs'), { recursive: true });
    const stepLog = logs.find((entry) => entry.endsWith('.out') || entry.endsWith('.log'));
    assert.ok(stepLog, `a log was written: ${logs.join(', ')}`);
    assert.equal(nobodyReads(join(home, 'logs', stepLog)), false, 'logs are private');
    assert.equal(await mode(join(home, 'logs', stepLog)), '600');
  } finally {
    await server.close();
  }
});

test('an existing home with loose modes: data/ and logs/ are tightened at start, the rest named in one warning line', async (t) => {
  const home = join(await openParent(t), 'home');
  for (const dir of ['dags', 'data', 'logs']) await mkdir(join(home, dir), { recursive: true });
  await writeFile(join(home, 'data', 'cron-state.json'), '{}');
  await writeFile(join(home, 'logs', 'old.log'), 'old output');
  await chmod(join(home, 'data', 'cron-state.json'), 0o644);
  for (const dir of ['', 'dags', 'data', 'logs']) await chmod(join(home, dir), 0o755);
  assert.equal(nobodyReads(join(home, 'logs', 'old.log')), true, 'readable before the start');

  const server = await startCli(['--home', home, '--port', '0']);
  try {
    assert.equal(await mode(join(home, 'data')), '700');
    assert.equal(await mode(join(home, 'logs')), '700');
    assert.equal(await mode(join(home, 'data', 'cron-state.json')), '600');
    assert.equal(await mode(join(home, 'data', 'data.mdb')), '600');
    assert.equal(nobodyReads(join(home, 'logs', 'old.log')), false, 'the old logs are out of reach');
    const warnings = server.output().split('\n').filter((line) => line.includes('readable by other users'));
    assert.equal(warnings.length, 1, server.output());
    assert.ok(warnings[0].includes(`${home} (755)`) && warnings[0].includes(`${join(home, 'dags')} (755)`), warnings[0]);
    // The definitions stay as the owner set them: shared on purpose, perhaps.
    assert.equal(await mode(join(home, 'dags')), '755');
  } finally {
    server.child.kill('SIGTERM');
    await exited(server.child);
  }
});

// The step registry as the next server reads it: groups a dead server recorded are ended, a live
// server's are left alone, and a pid reused by another process is never signalled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endOrphanSteps } from './orphans.ts';
import { StepRegistry, processStat } from './step-registry.ts';

const registryModule = new URL('./step-registry.ts', import.meta.url).href;

/** Records `pid` (with its start time moved by `skew` ticks) in `dir` from a server process that then exits. */
function recordFromDeadServer(dir: string, pid: number, skew = 0): void {
  const script = `import { StepRegistry, processStat } from '${registryModule}';
    const registry = new StepRegistry(${JSON.stringify(dir)}, 'dead', '');
    registry.add(${pid}, 'dag run-1 one');
    if (${skew} !== 0) {
      const { writeSync } = await import('node:fs');
      const bytes = Buffer.alloc(8);
      bytes.writeDoubleLE(processStat(${pid}).startTime + ${skew});
      writeSync(registry.descriptor, bytes, 0, 8, 128 + 8); // the first slot's start time (step-registry.ts)
    }`;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
}

function sleeper(t: { after: (fn: () => void) => void }): ChildProcess {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  return child;
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve();
  else child.once('exit', () => resolve());
});

test('a group a dead server recorded is ended and its file removed; a live server\'s file stays', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-registry-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const orphan = sleeper(t);
  const guarded = sleeper(t);
  recordFromDeadServer(dir, orphan.pid!);
  const live = new StepRegistry(dir, 'live', '');
  live.add(guarded.pid!, 'dag run-2 two');
  const lines: string[] = [];

  const ended = await endOrphanSteps(dir, { log: (line) => lines.push(line) });
  assert.deepEqual(ended.map(({ pid, label }) => [pid, label]), [[orphan.pid, 'dag run-1 one']]);
  await exited(orphan);
  assert.equal(orphan.signalCode, 'SIGTERM');
  assert.equal(processStat(guarded.pid!)?.state, 'S', 'the live server\'s step runs on');
  assert.deepEqual(await readdir(dir), ['live']);
  assert.match(lines.join('\n'), /ending step process group \d+ \(run dag\/run-1, step one\)/);
});

test('a recorded pid now held by another process (its start time differs) is not signalled', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-registry-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const other = sleeper(t);
  recordFromDeadServer(dir, other.pid!, -5);
  assert.deepEqual(await endOrphanSteps(dir), []);
  assert.equal(processStat(other.pid!)?.state, 'S');
  assert.deepEqual(await readdir(dir), [], 'the file is read once');
});

test('a group that ignores SIGTERM gets SIGKILL after the grace period', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-registry-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const stubborn = spawn('sh', ['-c', 'trap "" TERM; sleep 60 & wait'], { detached: true, stdio: 'ignore' });
  t.after(() => { try { process.kill(-stubborn.pid!, 'SIGKILL'); } catch { /* gone */ } });
  recordFromDeadServer(dir, stubborn.pid!);
  await endOrphanSteps(dir, { graceMs: 200 });
  await exited(stubborn);
  assert.equal(stubborn.signalCode, 'SIGKILL');
});

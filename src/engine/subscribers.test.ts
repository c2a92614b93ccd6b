// A subscriber may call the engine from inside the events it hears: the first of a run's events is
// told in the scheduler's own step (as the run begins), where the scheduler cannot answer at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus, systemClock } from '../core/index.ts';
import { PiscinaDispatcher, spawnMethod } from '../executors/index.ts';
import { Definitions } from '../catalog/index.ts';
import { DagFiles, LmdbQueueStore, LmdbRunStore, LogFiles } from '../store/index.ts';
import { Engine } from './engine.ts';

test('a subscriber that dequeues a run as it hears another begin gets its answer', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'troupe-subscriber-'));
  for (const dir of ['dags', 'data', 'logs']) await mkdir(join(home, dir));
  await writeFile(join(home, 'dags', 'slow.yaml'), 'queue: held\nsteps:\n  - name: wait\n    command: sleep 30\n');
  await writeFile(join(home, 'dags', 'quick.yaml'), 'steps:\n  - name: one\n    command: "true"\n');
  const runs = new LmdbRunStore(join(home, 'data'));
  const steps = new PiscinaDispatcher({ maxThreads: 1, spawnMode: spawnMethod });
  const dags = new DagFiles(join(home, 'dags'));
  const engine = new Engine({
    runs, queue: new LmdbQueueStore(runs), queueLimits: new Map([['held', 1]]), queuedStartDeadlineMs: 10_000, definitions: new Definitions(dags), dags,
    logs: new LogFiles(join(home, 'logs')), clock: systemClock, dispatcher: steps, systemEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  await engine.start();
  t.after(async () => {
    await engine.close();
    await steps.close();
    await runs.close();
    await rm(home, { recursive: true, force: true });
  });

  const first = await engine.enqueueDag('slow', {});
  const waiting = await engine.enqueueDag('slow', {});
  assert.equal(runs.get('slow', waiting.dagRunId)?.status, RunStatus.Queued);
  let dequeued: Promise<void> | undefined;
  engine.subscribe((event) => {
    if (event.type === 'run.running' && event.name === 'quick') dequeued ??= engine.dequeue('slow', waiting.dagRunId);
  });
  const quick = await engine.startDag('quick', {});
  assert.ok(dequeued, 'the subscriber heard the run begin');
  await dequeued;
  assert.equal(runs.get('slow', waiting.dagRunId)?.status, RunStatus.Aborted);
  await engine.whenFinished('quick', quick.dagRunId);
  await engine.stop('slow', first.dagRunId);
  await engine.whenFinished('slow', first.dagRunId);
});

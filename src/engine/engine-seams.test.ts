// The engine's seams, on a real home with real processes: runs that execute "elsewhere", behind a
// RunDispatcher that passes each run and each report as a copy (structuredClone) a turn of the
// event loop later, as a dispatcher to another machine would; and a subscriber that calls the
// engine from inside the events it hears (a run's first events are told in the scheduler's own
// step, as the run begins, where the scheduler cannot answer at once).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalRunDispatcher, type RunDispatcher, type RunInput, type RunReports } from '../actors/index.ts';
import { Definitions } from '../catalog/index.ts';
import { RunStatus, systemClock } from '../core/index.ts';
import { PiscinaDispatcher, spawnMethod } from '../executors/index.ts';
import { DagFiles, LmdbQueueStore, LmdbRunStore, LogFiles } from '../store/index.ts';
import { Engine, type RunDispatcherFactory } from './engine.ts';

/** An engine on a new home holding `dags` (name -> YAML), its steps real processes on a one-thread pool. */
async function engineOnHome(t: TestContext, dags: Record<string, string>, options: { queueLimits?: Map<string, number>; runDispatcher?: (steps: PiscinaDispatcher) => RunDispatcherFactory } = {}) {
  const home = await mkdtemp(join(tmpdir(), 'troupe-engine-'));
  for (const dir of ['dags', 'data', 'logs']) await mkdir(join(home, dir));
  for (const [name, spec] of Object.entries(dags)) await writeFile(join(home, 'dags', `${name}.yaml`), spec);
  const runs = new LmdbRunStore(join(home, 'data'));
  const steps = new PiscinaDispatcher({ maxThreads: 1, spawnMode: spawnMethod });
  const files = new DagFiles(join(home, 'dags'));
  const engine = new Engine({
    runs, queue: new LmdbQueueStore(runs), queueLimits: options.queueLimits ?? new Map(), queuedStartDeadlineMs: 10_000,
    definitions: new Definitions(files), dags: files, logs: new LogFiles(join(home, 'logs')), clock: systemClock, dispatcher: steps,
    systemEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, ...(options.runDispatcher ? { runDispatcher: options.runDispatcher(steps) } : {}),
  });
  await engine.start();
  t.after(async () => {
    await engine.close();
    await steps.close();
    await runs.close();
    await rm(home, { recursive: true, force: true });
  });
  return { engine, runs };
}

const later = (fn: () => void) => setImmediate(fn);

/** Runs executed by a local dispatcher that sees only copies, and answers only with copies, a turn later. */
function elsewhere(steps: PiscinaDispatcher, seen: { runs: string[]; stops: string[] }): RunDispatcherFactory {
  return ({ reports, subDags }) => {
    const relay: RunReports = {
      record: (record, changed) => later(() => reports.record(structuredClone(record), [...changed])),
      logLine: (path, line) => later(() => reports.logLine(path, line)),
      finished: (end) => later(() => reports.finished(structuredClone(end))),
    };
    const remote = new LocalRunDispatcher({ steps, clock: systemClock, subDags, reports: relay });
    const dispatcher: RunDispatcher = {
      start: (run: RunInput) => {
        seen.runs.push(run.record.dagRunId);
        const copy = structuredClone(run);
        later(() => remote.start(copy));
      },
      stop: (name, dagRunId, at) => {
        seen.stops.push(dagRunId);
        later(() => remote.stop(name, dagRunId, at));
      },
    };
    return dispatcher;
  };
}

test('a run executed behind another dispatcher is admitted, recorded, logged, stopped and counted as any run', async (t) => {
  const seen = { runs: [] as string[], stops: [] as string[] };
  const { engine, runs } = await engineOnHome(t, {
    three: 'steps:\n  - name: a\n    command: echo one\n    output: FIRST\n  - name: b\n    command: echo "${FIRST} two"\n    depends: a\n    output: SECOND\n  - name: c\n    command: echo done\n    depends: b\n',
    slow: 'maxActiveRuns: 1\nsteps:\n  - name: wait\n    command: sleep 30\n',
  }, { runDispatcher: (steps) => elsewhere(steps, seen) });

  const { dagRunId } = await engine.startDag('three', {});
  await engine.whenFinished('three', dagRunId);
  const record = runs.get('three', dagRunId)!;
  assert.equal(record.status, RunStatus.Succeeded);
  assert.deepEqual(record.nodes.map((node) => node.status), [4, 4, 4]);
  assert.equal(record.outputVars?.SECOND, 'one two', 'an output of one step reached the next through the copies');
  assert.match(await readFile(record.log, 'utf8'), /succeeded/i, 'the run log got the lines reported from elsewhere');
  assert.equal(engine.isActive('three', dagRunId), false);

  const slow = await engine.startDag('slow', {});
  await assert.rejects(engine.startDag('slow', {}), { code: 'max_run_reached' }, 'the run executing elsewhere holds its slot');
  await engine.stop('slow', slow.dagRunId);
  await engine.whenFinished('slow', slow.dagRunId);
  assert.equal(runs.get('slow', slow.dagRunId)?.status, RunStatus.Aborted);
  assert.deepEqual(seen, { runs: [dagRunId, slow.dagRunId], stops: [slow.dagRunId] });
  const again = await engine.startDag('slow', {});
  await engine.stop('slow', again.dagRunId);
  await engine.whenFinished('slow', again.dagRunId);
});

test('a subscriber that dequeues a run as it hears another begin gets its answer', async (t) => {
  const { engine, runs } = await engineOnHome(t, {
    slow: 'queue: held\nsteps:\n  - name: wait\n    command: sleep 30\n',
    quick: 'steps:\n  - name: one\n    command: "true"\n',
  }, { queueLimits: new Map([['held', 1]]) });

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

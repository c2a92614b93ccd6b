// The engine's timers on XState's SimulatedClock: retry waits with backoff, a step's timeout and the
// initial delay happen at the simulated times, and the test never sleeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import type { StepDispatcher, StepHandle, StepResult, StepTask } from '../core/index.ts';
import { DagFiles, LmdbQueueStore, LmdbRunStore, LogFiles } from '../store/index.ts';
import { Definitions } from '../catalog/index.ts';
import { Engine } from './engine.ts';

/** A dispatcher whose steps answer at once with `answer`, or, when it is undefined, when stopped. */
function fakeDispatcher(clock: SimulatedClock, answer: (task: StepTask, call: number) => StepResult | undefined) {
  const calls: number[] = [];
  const dispatcher: StepDispatcher = {
    dispatch(task: StepTask): StepHandle {
      calls.push(clock.now());
      const result = answer(task, calls.length);
      let stop!: (result: StepResult) => void;
      const stopped = new Promise<StepResult>((resolve) => (stop = resolve));
      return {
        result: result ? Promise.resolve(result) : stopped,
        stop: (signal) => stop({ kind: 'ok', exitCode: 143, signal, error: `signal: ${signal}` }),
      };
    },
    close: async () => {},
  };
  return { dispatcher, calls };
}

async function engineWith(t: { after: (fn: () => Promise<void>) => void }, spec: string, answer: (task: StepTask, call: number) => StepResult | undefined) {
  const home = await mkdtemp(join(tmpdir(), 'troupe-clock-'));
  for (const dir of ['dags', 'data', 'logs']) await mkdir(join(home, dir));
  await writeFile(join(home, 'dags', 'timed.yaml'), spec);
  const clock = new SimulatedClock();
  clock.set(1_700_000_000_000);
  const runs = new LmdbRunStore(join(home, 'data'));
  const { dispatcher, calls } = fakeDispatcher(clock, answer);
  const dags = new DagFiles(join(home, 'dags'));
  const engine = new Engine({
    runs, queue: new LmdbQueueStore(runs), queueLimits: new Map(), queuedStartDeadlineMs: 10_000, definitions: new Definitions(dags), dags,
    logs: new LogFiles(join(home, 'logs')), dispatcher, systemEnv: {}, clock, timers: clock,
  });
  await engine.start();
  t.after(async () => { await engine.close(); await runs.close(); await rm(home, { recursive: true, force: true }); });
  return { engine, runs, clock, calls };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('retries wait interval x backoff^attempt on the clock', async (t) => {
  const spec = 'steps:\n  - name: s\n    command: "false"\n    retryPolicy: {limit: 3, intervalSec: 10, backoff: 2, maxIntervalSec: 25}\n';
  const { engine, runs, clock, calls } = await engineWith(t, spec, () => ({ kind: 'ok', exitCode: 1, error: 'exit status 1' }));
  const start = clock.now();
  const { dagRunId } = await engine.startDag('timed', {});
  await settle();
  for (const step of [10_000, 20_000, 25_000]) {
    clock.increment(step - 1);
    await settle();
    const before = calls.length;
    clock.increment(1);
    await settle();
    assert.equal(calls.length, before + 1, `a retry after ${step} ms`);
  }
  await engine.whenFinished('timed', dagRunId);
  assert.deepEqual(calls.map((at) => at - start), [0, 10_000, 30_000, 55_000]);
  assert.deepEqual([runs.get('timed', dagRunId)?.status, runs.get('timed', dagRunId)?.nodes[0].retryCount], [2, 3]);
});

test('a step past its timeout is stopped and fails; delaySec holds the first step back', async (t) => {
  const spec = 'delaySec: 5\nsteps:\n  - name: slow\n    command: sleep 100\n    timeoutSec: 30\n';
  const { engine, runs, clock, calls } = await engineWith(t, spec, () => undefined);
  const start = clock.now();
  const { dagRunId } = await engine.startDag('timed', {});
  await settle();
  assert.equal(calls.length, 0, 'nothing runs during the delay');
  clock.increment(5_000);
  await settle();
  assert.deepEqual(calls.map((at) => at - start), [5_000]);
  clock.increment(30_000);
  await engine.whenFinished('timed', dagRunId);
  const record = runs.get('timed', dagRunId)!;
  assert.deepEqual([record.status, record.nodes[0].status, record.nodes[0].error], [2, 2, 'step timed out after 30s']);
  assert.equal(Date.parse(record.nodes[0].startedAt) - start, 5_000);
  assert.equal(Date.parse(record.nodes[0].finishedAt) - start, 35_000);
});

// DAGs run on their schedule on the real server: the scheduler's clock and timers are a
// ManualClock the tests move, so no test waits for a tick. Runs are observed over HTTP.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { homePaths } from '../src/main.ts';
import { ManualClock } from '../src/core/index.ts';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { setLogSink } from '../src/logging/index.ts';

interface RunSummary {
  dagRunId: string;
  status: number;
  queuedAt: string;
  startedAt: string;
}

interface CronServer extends TestServer {
  time: ManualClock;
  /** The runs of a DAG name, oldest first. */
  runsOf(name: string): Promise<RunSummary[]>;
  /** Waits until the DAG has `count` runs, all finished; answers them, oldest first. */
  finishedRuns(name: string, count: number): Promise<RunSummary[]>;
  createDag(name: string, spec: string): Promise<void>;
}

async function cronServer(start: string, options: { timeZone?: string; home?: string } = {}): Promise<CronServer> {
  const time = new ManualClock(start);
  const server = await startTestServer('node', { clock: time, cronTimers: time, timeZone: options.timeZone ?? 'UTC', ...(options.home ? { home: options.home } : {}) });
  // The server answers before its DAG files are planned; time moves only once they are.
  await server.troupe.cron.ready();
  const runsOf: CronServer['runsOf'] = async (name) => {
    const { status, body } = await server.call('GET', `/dag-runs?name=${name}`);
    assert.equal(status, 200);
    return body.dagRuns.reverse();
  };
  const finishedRuns: CronServer['finishedRuns'] = async (name, count) => {
    assert.ok(await waitUntil(async () => (await runsOf(name)).length >= count), `${name} has ${count} runs`);
    const runs = await runsOf(name);
    for (const run of runs) await server.waitForRun(name, run.dagRunId);
    return runsOf(name);
  };
  const createDag: CronServer['createDag'] = async (name, spec) => {
    const created = await server.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
  };
  return Object.assign(server, { time, runsOf, finishedRuns, createDag });
}

const at = (runs: Array<{ startedAt: string; status: number }>) => runs.map((run) => [run.startedAt, run.status]);
const SUCCEEDED = 4;
const ABORTED = 3;

describe('cron on the real server', () => {
  test('a DAG runs when the clock passes its tick, started at the tick, and its next run moves on', async () => {
    const server = await cronServer('2026-05-01T09:59:00Z');
    try {
      await server.createDag('daily', 'schedule: "0 10 * * *"\nsteps:\n  - echo scheduled\n');
      assert.equal((await server.call('GET', '/dags/daily')).body.nextRun, '2026-05-01T10:00:00.000Z');
      server.time.advanceTo('2026-05-01T10:00:00Z');
      const runs = await server.finishedRuns('daily', 1);
      assert.deepEqual(at(runs), [['2026-05-01T10:00:00.000Z', SUCCEEDED]]);
      assert.equal(await server.stepLog('daily', runs[0].dagRunId, 'cmd_1').then((text) => text.trim()), 'scheduled');
      assert.equal((await server.call('GET', '/dags/daily')).body.nextRun, '2026-05-02T10:00:00.000Z');
      assert.deepEqual((await server.call('GET', '/dags/daily')).body.missedRuns, []);
      // Renamed through the API, it runs under its new name at its next tick.
      assert.equal((await server.call('POST', '/dags/daily/rename', { newFileName: 'renamed' })).status, 200);
      assert.equal((await server.call('GET', '/dags/renamed')).body.nextRun, '2026-05-02T10:00:00.000Z');
      server.time.advanceTo('2026-05-02T10:00:00Z');
      assert.deepEqual(at(await server.finishedRuns('renamed', 1)), [['2026-05-02T10:00:00.000Z', SUCCEEDED]]);
      assert.equal((await server.runsOf('daily')).length, 1);
    } finally {
      await server.close();
    }
  });

  test('CRON_TZ and a daylight-saving change: a time in the skipped hour runs at the end of the gap', async () => {
    // 2026-03-08 06:00Z is 01:00 EST in New York; at 02:00 clocks spring forward to 03:00 EDT (07:00Z).
    const server = await cronServer('2026-03-08T06:00:00Z', { timeZone: 'America/New_York' });
    try {
      await server.createDag('gap', 'schedule: "30 2 * * *"\nsteps:\n  - echo gap\n');
      await server.createDag('tokyo', 'schedule: "CRON_TZ=Asia/Tokyo 30 15 * * *"\nsteps:\n  - echo tokyo\n');
      await server.createDag('half-hourly', 'schedule: "*/30 1-3 * * *"\nsteps:\n  - echo half\n');
      // The clock stops at each tick until its runs are done, so that each run is stamped with its tick.
      assert.deepEqual(server.time.armed, [Date.parse('2026-03-08T06:30:00Z')]);
      server.time.advanceTo('2026-03-08T06:30:00Z');
      assert.deepEqual(at(await server.finishedRuns('tokyo', 1)), [['2026-03-08T06:30:00.000Z', SUCCEEDED]], '15:30 in Tokyo');
      await server.finishedRuns('half-hourly', 1);
      assert.deepEqual(server.time.armed, [Date.parse('2026-03-08T07:00:00Z')], 'no tick in the hour that does not exist');
      server.time.advanceTo('2026-03-08T07:00:00Z');
      assert.deepEqual(at(await server.finishedRuns('gap', 1)), [['2026-03-08T07:00:00.000Z', SUCCEEDED]], '02:30 does not exist: 03:00 EDT');
      await server.finishedRuns('half-hourly', 2);
      server.time.advanceTo('2026-03-08T07:30:00Z');
      // Real time: 01:30 EST, then 03:00 and 03:30 EDT; no 02:xx that night.
      assert.deepEqual(at(await server.finishedRuns('half-hourly', 3)), [
        ['2026-03-08T06:30:00.000Z', SUCCEEDED], ['2026-03-08T07:00:00.000Z', SUCCEEDED], ['2026-03-08T07:30:00.000Z', SUCCEEDED],
      ]);
    } finally {
      await server.close();
    }
  });

  test('list and object forms: each start time runs; restart stops the run, waits restartWaitSec, starts anew; stop stops', async () => {
    const server = await cronServer('2026-05-01T09:59:00Z');
    try {
      await server.createDag('listed', 'schedule:\n  - "0 10 * * *"\n  - "CRON_TZ=Europe/Paris 30 12 * * *"\nsteps:\n  - echo listed\n');
      await server.createDag('office', 'restartWaitSec: 30\nschedule:\n  start: "0 10 * * *"\n  restart: "0 11 * * *"\n  stop: ["0 12 * * *"]\nsteps:\n  - sleep 60\n');
      server.time.advanceTo('2026-05-01T10:00:00Z');
      assert.ok(await waitUntil(async () => (await server.runsOf('office')).at(0)?.status === 1), 'the office run is running');
      await server.finishedRuns('listed', 1);
      server.time.advanceTo('2026-05-01T10:30:00Z');
      assert.deepEqual(at(await server.finishedRuns('listed', 2)), [['2026-05-01T10:00:00.000Z', SUCCEEDED], ['2026-05-01T10:30:00.000Z', SUCCEEDED]], '12:30 in Paris is 10:30Z');
      server.time.advanceTo('2026-05-01T11:00:00Z');
      const first = (await server.finishedRuns('office', 1))[0];
      assert.deepEqual(at([first]), [['2026-05-01T10:00:00.000Z', ABORTED]], 'the restart stopped it');
      // The new run waits restartWaitSec on the scheduler's timers.
      assert.ok(await waitUntil(() => server.time.armed.includes(Date.parse('2026-05-01T11:00:30Z'))));
      assert.equal((await server.runsOf('office')).length, 1);
      server.time.advanceTo('2026-05-01T11:00:30Z');
      assert.ok(await waitUntil(async () => (await server.runsOf('office')).at(1)?.status === 1), 'the new run is running');
      server.time.advanceTo('2026-05-01T12:00:00Z');
      assert.deepEqual(at(await server.finishedRuns('office', 2)), [['2026-05-01T10:00:00.000Z', ABORTED], ['2026-05-01T11:00:30.000Z', ABORTED]]);
    } finally {
      await server.close();
    }
  });

  test('scheduled runs go through the DAG\'s queue: a tick that finds maxActiveRuns reached queues its run', async () => {
    const server = await cronServer('2026-05-01T09:59:00Z');
    try {
      await server.createDag('limited', 'maxActiveRuns: 1\nschedule: "*/10 * * * *"\nsteps:\n  - sleep 60\n');
      server.time.advanceTo('2026-05-01T10:00:00Z');
      assert.ok(await waitUntil(async () => (await server.runsOf('limited')).at(0)?.status === 1), 'the first run is running');
      server.time.advanceTo('2026-05-01T10:10:00Z');
      assert.ok(await waitUntil(async () => (await server.runsOf('limited')).length === 2));
      const [first, second] = await server.runsOf('limited');
      assert.equal(first.status, 1);
      assert.deepEqual([second.status, second.queuedAt], [5, '2026-05-01T10:10:00.000Z'], 'queued, not refused');
      await server.call('POST', `/dag-runs/limited/${first.dagRunId}/stop`);
      assert.ok(await waitUntil(async () => (await server.runsOf('limited')).at(1)?.status === 1), 'the queued run starts when the slot frees');
      assert.equal((await server.call('POST', '/dags/limited/stop-all')).status, 200);
      assert.deepEqual((await server.finishedRuns('limited', 2)).map((run) => run.status), [ABORTED, ABORTED]);
    } finally {
      await server.close();
    }
  });

  test('skipIfSuccessful: a start tick is skipped when the latest run succeeded after the previous tick', async () => {
    const server = await cronServer('2026-05-01T09:30:00Z');
    try {
      await server.createDag('skipper', 'skipIfSuccessful: true\nschedule: "0 * * * *"\nsteps:\n  - echo skip\n');
      await server.createDag('control', 'schedule: "0 * * * *"\nsteps:\n  - echo control\n');
      await server.startAndWait('skipper');
      await server.startAndWait('control');
      server.time.advanceTo('2026-05-01T10:00:00Z');
      // The decision is made at the tick: once the control DAG's run of the same tick is done, none came for skipper.
      await server.finishedRuns('control', 2);
      assert.deepEqual(at(await server.runsOf('skipper')), [['2026-05-01T09:30:00.000Z', SUCCEEDED]]);
      server.time.advanceTo('2026-05-01T11:00:00Z');
      assert.deepEqual(at(await server.finishedRuns('skipper', 2)), [['2026-05-01T09:30:00.000Z', SUCCEEDED], ['2026-05-01T11:00:00.000Z', SUCCEEDED]]);
    } finally {
      await server.close();
    }
  });

  test('a suspended DAG is not scheduled; resumed, it runs at its next tick without catching up', async () => {
    const server = await cronServer('2026-05-01T09:30:00Z');
    try {
      await server.createDag('sleepy', 'schedule: "0 * * * *"\nsteps:\n  - echo sleepy\n');
      await server.createDag('control', 'schedule: "0 * * * *"\nsteps:\n  - echo control\n');
      assert.equal((await server.call('POST', '/dags/sleepy/suspend', { suspend: true })).status, 200);
      assert.equal((await server.call('GET', '/dags/sleepy')).body.nextRun, null);
      server.time.advanceTo('2026-05-01T10:30:00Z');
      await server.finishedRuns('control', 1);
      assert.deepEqual(await server.runsOf('sleepy'), []);
      assert.equal((await server.call('POST', '/dags/sleepy/suspend', { suspend: false })).status, 200);
      assert.equal((await server.call('GET', '/dags/sleepy')).body.nextRun, '2026-05-01T11:00:00.000Z');
      server.time.advanceTo('2026-05-01T11:00:00Z');
      assert.deepEqual(at(await server.finishedRuns('sleepy', 1)), [['2026-05-01T11:00:00.000Z', SUCCEEDED]]);
    } finally {
      await server.close();
    }
  });

  test('DAG files written, edited and deleted by hand in the DAGs directory are picked up without a restart', async () => {
    const server = await cronServer('2026-05-01T09:00:00Z');
    const nextRun = async () => (await server.call('GET', '/dags/by-hand')).body?.nextRun;
    try {
      await server.writeDag('by-hand', 'schedule: "0 10 * * *"\nsteps:\n  - echo by hand\n');
      assert.ok(await waitUntil(async () => (await nextRun()) === '2026-05-01T10:00:00.000Z'), 'the new file is planned');
      assert.deepEqual(server.time.armed, [Date.parse('2026-05-01T10:00:00Z')]);
      await server.writeDag('by-hand', 'schedule: "30 10 * * *"\nsteps:\n  - echo edited\n');
      assert.ok(await waitUntil(async () => (await nextRun()) === '2026-05-01T10:30:00.000Z'), 'the edit replaces the schedule');
      // Were the old 10:00 tick still planned, it would fire on the way and make a second run.
      server.time.advanceTo('2026-05-01T10:30:00Z');
      const runs = await server.finishedRuns('by-hand', 1);
      assert.deepEqual(at(runs), [['2026-05-01T10:30:00.000Z', SUCCEEDED]], 'no run at the old 10:00');
      assert.equal((await server.stepLog('by-hand', runs[0].dagRunId, 'cmd_1')).trim(), 'edited');
      await rm(join(server.home, 'dags', 'by-hand.yaml'));
      // Nothing is scheduled any more: the scheduler has no timer armed.
      assert.ok(await waitUntil(() => server.time.armed.length === 0), 'the deleted file is no longer planned');
      server.time.advanceTo('2026-05-03T00:00:00Z');
      assert.equal((await server.runsOf('by-hand')).length, 1);
    } finally {
      await server.close();
    }
  });

  test('ticks missed while the server was down are logged and listed on the DAG, not run', async () => {
    const first = await cronServer('2026-05-01T09:30:00Z');
    const home = first.home;
    let second: CronServer | undefined;
    const lines: string[] = [];
    let restoreLog = () => {};
    try {
      await first.createDag('nightly', 'schedule:\n  start: "0 10 * * *"\n  stop: "0 11 * * *"\nsteps:\n  - echo nightly\n');
      await first.createDag('changed', 'schedule: "0 10 * * *"\nsteps:\n  - echo changed\n');
      await first.troupe.close();
      await first.writeDag('changed', 'schedule: "15 10 * * *"\nsteps:\n  - echo changed\n');
      restoreLog = setLogSink({ write: (line: string) => lines.push(JSON.parse(line).msg) });
      second = await cronServer('2026-05-02T10:30:00Z', { home });
      restoreLog();
      const missed = (await second.call('GET', '/dags/nightly')).body.missedRuns;
      assert.deepEqual(missed, [
        { kind: 'start', scheduledAt: '2026-05-01T10:00:00.000Z', expression: '0 10 * * *', noticedAt: '2026-05-02T10:30:00.000Z' },
        { kind: 'stop', scheduledAt: '2026-05-01T11:00:00.000Z', expression: '0 11 * * *', noticedAt: '2026-05-02T10:30:00.000Z' },
        { kind: 'start', scheduledAt: '2026-05-02T10:00:00.000Z', expression: '0 10 * * *', noticedAt: '2026-05-02T10:30:00.000Z' },
      ]);
      assert.deepEqual(lines.filter((line) => line.startsWith('troupe: cron:')), [
        'troupe: cron: DAG nightly missed its start tick at 2026-05-01T10:00:00.000Z (0 10 * * *): the server was not running; listed, not run',
        'troupe: cron: DAG nightly missed its stop tick at 2026-05-01T11:00:00.000Z (0 11 * * *): the server was not running; listed, not run',
        'troupe: cron: DAG nightly missed its start tick at 2026-05-02T10:00:00.000Z (0 10 * * *): the server was not running; listed, not run',
      ]);
      assert.deepEqual((await second.call('GET', '/dags/changed')).body.missedRuns, [], 'its schedule was edited while the server was down');
      assert.deepEqual(await second.runsOf('nightly'), [], 'missed ticks are not run');
      second.time.advanceTo('2026-05-03T10:00:00Z');
      assert.deepEqual(at(await second.finishedRuns('nightly', 1)), [['2026-05-03T10:00:00.000Z', SUCCEEDED]]);
    } finally {
      restoreLog();
      if (second) await second.close();
      else await first.close();
    }
  });

  test('the API answers before the DAG files are planned; nextRun and missedRuns wait for the plan', async () => {
    const first = await cronServer('2026-05-01T09:30:00Z');
    const home = first.home;
    let second: TestServer | undefined;
    let restoreLog = () => {};
    try {
      await first.createDag('nightly', 'schedule: "0 10 * * *"\nsteps:\n  - echo nightly\n');
      await first.troupe.close();
      const { dagsDir } = homePaths(home);
      await Promise.all(Array.from({ length: 400 }, (_, index) =>
        writeFile(join(dagsDir, `later${index}.yaml`), `schedule: "30 ${index % 24} * * *"\nsteps:\n  - echo ${index}\n`)));
      const time = new ManualClock('2026-05-02T09:30:00Z');
      restoreLog = setLogSink({ write: () => {} });
      second = await startTestServer('node', { clock: time, cronTimers: time, timeZone: 'UTC', home });
      let planned = false;
      void second.troupe.cron.ready().then(() => { planned = true; });
      const [dag, list] = await Promise.all([second.call('GET', '/dags/nightly'), second.call('GET', '/dags?sort=nextRun&perPage=1')]);
      assert.equal(planned, true, 'answered once planned');
      assert.equal(dag.body.nextRun, '2026-05-02T10:00:00.000Z');
      assert.deepEqual(dag.body.missedRuns.map((tick: { scheduledAt: string }) => tick.scheduledAt), ['2026-05-01T10:00:00.000Z']);
      assert.deepEqual(list.body.dags.map((item: { fileName: string; nextRun: string }) => [item.fileName, item.nextRun]), [['nightly', '2026-05-02T10:00:00.000Z']]);
    } finally {
      restoreLog();
      if (second) await second.close();
      else await first.close();
    }
  });
});

// The cron scheduler's decisions on a manual clock, against an in-memory engine port: what each
// tick kind does, skipIfSuccessful, suspension, DAG changes, and the ticks missed while down.
// The real engine, store and HTTP are covered by test/cron.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, RunStatus, type CronState, type CronStateStore } from '../../core/index.ts';
import { parseDag } from '../../definition/index.ts';
import { CronScheduler, MISSED_LISTED, type CronDag, type CronEngine } from './cron-scheduler.ts';

const iso = (ms: number) => new Date(ms).toISOString();

function dagOf(name: string, yaml: string): CronDag {
  const { dag, errors } = parseDag(`${yaml}\nsteps:\n  - echo hi\n`, { baseDir: '/dags', fileName: name });
  assert.deepEqual(errors, []);
  return { name: dag!.name, schedule: dag!.schedule, skipIfSuccessful: dag!.skipIfSuccessful, restartWaitSec: dag!.restartWaitSec };
}

/** The engine as the scheduler sees it: DAG files, and every call it makes, stamped with the clock. */
class EngineSpy implements CronEngine {
  files = new Map<string, CronDag | 'broken'>();
  readonly calls: string[] = [];
  readonly latest = new Map<string, { status: number; startedAt: string }>();
  readonly suspended = new Set<string>();
  constructor(private readonly time: ManualClock) {}
  async fileNames() { return [...this.files.keys()]; }
  async loadDag(fileName: string) {
    const file = this.files.get(fileName);
    return file === undefined ? undefined : file === 'broken' ? {} : { dag: file };
  }
  async enqueue(fileName: string) {
    this.calls.push(`${iso(this.time.now())} enqueue ${fileName}`);
    return { dagRunId: String(this.calls.length) };
  }
  async stopAll(name: string) { this.calls.push(`${iso(this.time.now())} stopAll ${name}`); }
  latestRun(name: string) { return this.latest.get(name); }
  isSuspended(fileName: string) { return this.suspended.has(fileName); }
}

class MemoryState implements CronStateStore {
  value: CronState | undefined;
  async read() { return this.value && structuredClone(this.value); }
  async write(state: CronState) { this.value = structuredClone(state); }
}

function setup(start: string, state = new MemoryState()) {
  const time = new ManualClock(start);
  const engine = new EngineSpy(time);
  const lines: string[] = [];
  const cron = new CronScheduler({ engine, state, clock: time, timers: time, timeZone: 'UTC', log: (line) => lines.push(line) });
  return { time, engine, state, lines, cron };
}

/** Lets the scheduler's promises and its once-a-turn refresh run. */
const settle = async () => {
  for (let turn = 0; turn < 5; turn++) await nextTurn();
};

test('a start tick enqueues, a stop tick stops, a restart stops, waits restartWaitSec and enqueues', async () => {
  const { time, engine, cron } = setup('2026-05-01T07:59:00Z');
  engine.files.set('office', dagOf('office', 'restartWaitSec: 30\nschedule:\n  start: "0 8 * * *"\n  restart: "0 12 * * *"\n  stop: "0 18 * * *"'));
  await cron.start();
  time.advanceTo('2026-05-01T12:00:00Z');
  await settle();
  assert.deepEqual(time.armed, [Date.parse('2026-05-01T12:00:30Z'), Date.parse('2026-05-01T18:00:00Z')], 'the restart waits on the injected timers');
  time.advanceTo('2026-05-01T12:00:30Z');
  await settle();
  time.advanceTo('2026-05-01T19:00:00Z');
  assert.deepEqual(engine.calls, [
    '2026-05-01T08:00:00.000Z enqueue office',
    '2026-05-01T12:00:00.000Z stopAll office',
    '2026-05-01T12:00:30.000Z enqueue office',
    '2026-05-01T18:00:00.000Z stopAll office',
  ]);
  await cron.close();
});

test('skipIfSuccessful skips a start tick when the latest run succeeded after the previous tick', async () => {
  const { time, engine, lines, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('hourly', dagOf('hourly', 'skipIfSuccessful: true\nschedule: "0 * * * *"'));
  await cron.start();
  engine.latest.set('hourly', { status: RunStatus.Succeeded, startedAt: '2026-05-01T09:10:00.000Z' });
  time.advanceTo('2026-05-01T10:00:00Z');
  assert.deepEqual(engine.calls, [], 'succeeded at 09:10, after the 09:00 tick');
  assert.match(lines.join('\n'), /skipped the start tick of DAG hourly at 2026-05-01T10:00:00.000Z: skipIfSuccessful/);
  time.advanceTo('2026-05-01T11:00:00Z');
  assert.deepEqual(engine.calls, ['2026-05-01T11:00:00.000Z enqueue hourly'], 'its success was before the 10:00 tick');
  engine.latest.set('hourly', { status: RunStatus.Failed, startedAt: '2026-05-01T11:30:00.000Z' });
  time.advanceTo('2026-05-01T12:00:00Z');
  assert.equal(engine.calls.length, 2, 'a failure does not skip');
  engine.latest.set('hourly', { status: RunStatus.Succeeded, startedAt: '2026-05-01T12:00:00.000Z' });
  time.advanceTo('2026-05-01T13:00:00Z');
  assert.equal(engine.calls.length, 2, 'a run started at the previous tick counts');
  await cron.close();
});

test('without skipIfSuccessful a success does not skip; a restart tick never skips', async () => {
  const { time, engine, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('plain', dagOf('plain', 'schedule: "0 * * * *"'));
  engine.files.set('restarts', dagOf('restarts', 'skipIfSuccessful: true\nschedule:\n  restart: "0 * * * *"'));
  engine.latest.set('plain', { status: RunStatus.Succeeded, startedAt: '2026-05-01T09:10:00.000Z' });
  engine.latest.set('restarts', { status: RunStatus.Succeeded, startedAt: '2026-05-01T09:10:00.000Z' });
  await cron.start();
  time.advanceTo('2026-05-01T10:00:00Z');
  await settle();
  assert.deepEqual(engine.calls, ['2026-05-01T10:00:00.000Z enqueue plain', '2026-05-01T10:00:00.000Z stopAll restarts', '2026-05-01T10:00:00.000Z enqueue restarts']);
  await cron.close();
});

test('a suspended DAG is not scheduled, and once resumed does not catch up', async () => {
  const { time, engine, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('hourly', dagOf('hourly', 'schedule: "0 * * * *"'));
  await cron.start();
  engine.suspended.add('hourly');
  cron.suspendChanged('hourly', true);
  await settle();
  assert.equal(cron.nextRun('hourly'), undefined);
  time.advanceTo('2026-05-01T11:30:00Z');
  engine.suspended.delete('hourly');
  cron.suspendChanged('hourly', false);
  await settle();
  assert.equal(iso(cron.nextRun('hourly')!), '2026-05-01T12:00:00.000Z');
  time.advanceTo('2026-05-01T12:00:00Z');
  assert.deepEqual(engine.calls, ['2026-05-01T12:00:00.000Z enqueue hourly']);
  await cron.close();
});

test('a restart waiting when the DAG is suspended, removed or the scheduler closes starts nothing', async () => {
  const { time, engine, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('a', dagOf('a', 'restartWaitSec: 60\nschedule:\n  restart: "0 10 * * *"'));
  engine.files.set('b', dagOf('b', 'restartWaitSec: 60\nschedule:\n  restart: "0 10 * * *"'));
  await cron.start();
  time.advanceTo('2026-05-01T10:00:00Z');
  await settle();
  engine.suspended.add('a');
  engine.files.delete('b');
  await cron.dagChanged('b');
  time.advanceTo('2026-05-01T10:05:00Z');
  await settle();
  assert.deepEqual(engine.calls, ['2026-05-01T10:00:00.000Z stopAll a', '2026-05-01T10:00:00.000Z stopAll b']);
  await cron.close();
});

test('DAG changes: an added DAG is planned, an edit replaces its schedule, a removal or an error unplans it', async () => {
  const { time, engine, cron } = setup('2026-05-01T09:30:00Z');
  await cron.start();
  engine.files.set('new', dagOf('new', 'schedule: "0 10 * * *"'));
  await cron.dagChanged('new');
  assert.equal(iso(cron.nextRun('new')!), '2026-05-01T10:00:00.000Z');
  engine.files.set('new', dagOf('new', 'schedule: "30 10 * * *"'));
  await cron.dagChanged('new');
  assert.equal(iso(cron.nextRun('new')!), '2026-05-01T10:30:00.000Z');
  await settle();
  time.advanceTo('2026-05-01T11:00:00Z');
  assert.deepEqual(engine.calls, ['2026-05-01T10:30:00.000Z enqueue new']);
  engine.files.set('new', 'broken');
  await cron.dagChanged('new');
  assert.equal(cron.nextRun('new'), undefined, 'a definition with errors cannot run');
  engine.files.set('new', dagOf('new', 'schedule: "0 12 * * *"'));
  await cron.dagChanged('new');
  engine.files.delete('new');
  await cron.dagChanged('new');
  await settle();
  time.advanceTo('2026-05-02T00:00:00Z');
  assert.equal(engine.calls.length, 1);
  await cron.close();
});

test('the same schedule read again keeps a tick that is due but not yet handed', async () => {
  const { time, engine, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('daily', dagOf('daily', 'schedule: "0 10 * * *"'));
  await cron.start();
  // The clock passes the tick without the timer firing yet (a timer runs a little late).
  time.jumpTo('2026-05-01T10:00:00.005Z');
  engine.files.set('daily', dagOf('daily', 'description: edited\nschedule: "0 10 * * *"'));
  await cron.dagChanged('daily');
  await settle();
  time.advanceBy(0);
  assert.deepEqual(engine.calls, ['2026-05-01T10:00:00.005Z enqueue daily'], 'handed when the late timer fires, not dropped');
  await cron.close();
});

test('renamed through the API, a DAG keeps its schedule and missed ticks', async () => {
  const { engine, state, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('old', dagOf('old', 'schedule: "0 10 * * *"'));
  await cron.start();
  await cron.close();
  const next = setup('2026-05-03T09:30:00Z', state);
  next.engine.files.set('old', engine.files.get('old')!);
  await next.cron.start();
  assert.equal(next.cron.missedRuns('old').length, 2);
  next.engine.files.set('new', next.engine.files.get('old')!);
  next.engine.files.delete('old');
  await next.cron.dagRenamed('old', 'new');
  assert.equal(next.cron.missedRuns('new').length, 2);
  assert.deepEqual(next.cron.missedRuns('old'), []);
  assert.equal(iso(next.cron.nextRun('new')!), '2026-05-03T10:00:00.000Z');
  await next.cron.close();
});

test('ticks missed while down are logged and listed, not run; a DAG whose schedule changed missed none', async () => {
  const first = setup('2026-05-01T09:30:00Z');
  first.engine.files.set('hourly', dagOf('hourly', 'schedule: "0 * * * *"'));
  first.engine.files.set('office', dagOf('office', 'schedule:\n  start: "0 11 * * *"\n  stop: "0 12 * * *"'));
  first.engine.files.set('edited', dagOf('edited', 'schedule: "0 11 * * *"'));
  await first.cron.start();
  first.time.advanceTo('2026-05-01T10:00:00Z');
  await first.cron.close();
  assert.equal(first.state.value?.handedUpTo, Date.parse('2026-05-01T10:00:00Z'));

  const second = setup('2026-05-01T12:30:00Z', first.state);
  second.engine.files = first.engine.files;
  second.engine.files.set('edited', dagOf('edited', 'schedule: "0 12 * * *"'));
  second.engine.files.set('added', dagOf('added', 'schedule: "0 11 * * *"'));
  await second.cron.start();
  assert.deepEqual(second.engine.calls, [], 'a missed tick is not run');
  assert.deepEqual(second.cron.missedRuns('hourly').map((tick) => [tick.kind, tick.scheduledAt, tick.noticedAt]), [
    ['start', '2026-05-01T11:00:00.000Z', '2026-05-01T12:30:00.000Z'],
    ['start', '2026-05-01T12:00:00.000Z', '2026-05-01T12:30:00.000Z'],
  ]);
  assert.deepEqual(second.cron.missedRuns('office').map((tick) => `${tick.kind} ${tick.scheduledAt} ${tick.expression}`), [
    'start 2026-05-01T11:00:00.000Z 0 11 * * *',
    'stop 2026-05-01T12:00:00.000Z 0 12 * * *',
  ]);
  assert.deepEqual(second.cron.missedRuns('edited'), []);
  assert.deepEqual(second.cron.missedRuns('added'), []);
  assert.deepEqual(second.lines, [
    'troupe: cron: DAG hourly missed its start tick at 2026-05-01T11:00:00.000Z (0 * * * *): the server was not running; listed, not run',
    'troupe: cron: DAG office missed its start tick at 2026-05-01T11:00:00.000Z (0 11 * * *): the server was not running; listed, not run',
    'troupe: cron: DAG hourly missed its start tick at 2026-05-01T12:00:00.000Z (0 * * * *): the server was not running; listed, not run',
    'troupe: cron: DAG office missed its stop tick at 2026-05-01T12:00:00.000Z (0 12 * * *): the server was not running; listed, not run',
  ]);
  second.time.advanceTo('2026-05-01T13:00:00Z');
  assert.deepEqual(second.engine.calls, ['2026-05-01T13:00:00.000Z enqueue hourly'], 'ticks after the start run');
  await second.cron.close();

  // The list survives a restart without an outage, and goes with the DAG file.
  const third = setup('2026-05-01T13:00:00Z', second.state);
  third.engine.files = second.engine.files;
  third.engine.files.delete('office');
  await third.cron.start();
  assert.equal(third.cron.missedRuns('hourly').length, 2);
  assert.deepEqual(third.cron.missedRuns('office'), []);
  await third.cron.close();
});

test('a long outage lists the first ticks of each DAG and says more were missed', async () => {
  const first = setup('2026-05-01T00:00:00Z');
  first.engine.files.set('minutely', dagOf('minutely', 'schedule: "* * * * *"'));
  await first.cron.start();
  await first.cron.close();
  const second = setup('2026-05-02T00:00:00Z', first.state);
  second.engine.files = first.engine.files;
  await second.cron.start();
  const missed = second.cron.missedRuns('minutely');
  assert.equal(missed.length, MISSED_LISTED);
  assert.equal(missed[0].scheduledAt, '2026-05-01T00:01:00.000Z');
  assert.equal(second.lines.at(-1), `troupe: cron: DAG minutely missed more than ${MISSED_LISTED} ticks; the first ${MISSED_LISTED} are listed`);
  await second.cron.close();
});

test('a tick being acted on when the server stops is stored as not acted on', async () => {
  const first = setup('2026-05-01T09:30:00Z');
  first.engine.files.set('slow', dagOf('slow', 'restartWaitSec: 600\nschedule:\n  restart: "0 10 * * *"'));
  await first.cron.start();
  first.time.advanceTo('2026-05-01T10:01:00Z');
  await settle();
  await first.cron.close();
  assert.deepEqual(first.engine.calls, ['2026-05-01T10:00:00.000Z stopAll slow'], 'closing cuts the wait short and starts nothing');
  const second = setup('2026-05-01T10:30:00Z', first.state);
  second.engine.files = first.engine.files;
  await second.cron.start();
  assert.deepEqual(second.cron.missedRuns('slow').map((tick) => `${tick.kind} ${tick.scheduledAt}`), ['restart 2026-05-01T10:00:00.000Z']);
  await second.cron.close();
});

test('a rescan picks up what no watch reported: added, edited and removed files; a listing that fails changes nothing', async () => {
  const { engine, lines, cron } = setup('2026-05-01T09:30:00Z');
  engine.files.set('kept', dagOf('kept', 'schedule: "0 10 * * *"'));
  engine.files.set('gone', dagOf('gone', 'schedule: "0 10 * * *"'));
  await cron.start();
  engine.files.delete('gone');
  engine.files.set('kept', dagOf('kept', 'schedule: "0 11 * * *"'));
  engine.files.set('added', dagOf('added', 'schedule: "0 12 * * *"'));
  await cron.rescan();
  assert.deepEqual(['kept', 'gone', 'added'].map((fileName) => cron.nextRun(fileName)).map((ms) => ms && iso(ms)), ['2026-05-01T11:00:00.000Z', undefined, '2026-05-01T12:00:00.000Z']);
  engine.fileNames = async () => { throw new Error('EIO'); };
  await cron.rescan();
  assert.equal(lines.at(-1), 'troupe: cron: cannot list the DAGs directory (EIO); the schedules are unchanged');
  assert.equal(iso(cron.nextRun('added')!), '2026-05-01T12:00:00.000Z');
  await cron.close();
});

/** Holds the engine's reads of DAG files until `release` is called: the server starting on many files. */
function gateLoads(engine: EngineSpy) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const load = engine.loadDag.bind(engine);
  let reads = 0;
  engine.loadDag = async (fileName) => {
    reads++;
    await gate;
    return load(fileName);
  };
  return { release, reads: () => reads };
}

test('the files are read in the background: ready, nextRun and missedRuns wait for them; changes made meanwhile count', async () => {
  const first = setup('2026-05-01T09:30:00Z');
  first.engine.files.set('daily', dagOf('daily', 'schedule: "0 10 * * *"'));
  first.engine.files.set('paused', dagOf('paused', 'schedule: "0 10 * * *"'));
  first.engine.suspended.add('paused');
  await first.cron.start();
  await first.cron.close();
  const { time, engine, cron } = setup('2026-05-02T09:59:00Z', first.state);
  engine.files = new Map(first.engine.files);
  engine.suspended.add('paused');
  const { release } = gateLoads(engine);
  void cron.start();
  let ready = false;
  void cron.ready().then(() => { ready = true; });
  await settle();
  assert.equal(ready, false, 'not ready while the files are read');
  // Meanwhile a tick falls, a DAG is resumed after it and another is added.
  time.advanceTo('2026-05-02T10:00:30Z');
  engine.suspended.delete('paused');
  cron.suspendChanged('paused', false);
  engine.files.set('added', dagOf('added', 'schedule: "30 10 * * *"'));
  const added = cron.dagChanged('added');
  release();
  await added;
  assert.equal(ready, true, 'a change made while the files were read is answered once they are planned');
  assert.equal(iso(cron.nextRun('added')!), '2026-05-02T10:30:00.000Z');
  assert.equal(iso(cron.nextRun('daily')!), '2026-05-03T10:00:00.000Z');
  assert.deepEqual(cron.missedRuns('daily').map((tick) => tick.scheduledAt), ['2026-05-01T10:00:00.000Z']);
  assert.deepEqual(cron.missedRuns('paused'), []);
  await settle();
  assert.deepEqual(engine.calls, ['2026-05-02T10:00:30.000Z enqueue daily'], 'the tick that fell meanwhile is acted on; the DAG suspended at its tick is not run');
  await cron.close();
});

test('closed while the files are read, the scheduler reads no more, becomes ready and keeps the stored state', async () => {
  const { engine, state, cron } = setup('2026-05-01T09:30:00Z');
  state.value = { handedUpTo: Date.parse('2026-05-01T09:00:00Z'), schedules: {}, missed: {}, unfinished: [] };
  for (let index = 0; index < 100; index++) engine.files.set(`dag${index}`, dagOf(`dag${index}`, 'schedule: "0 10 * * *"'));
  const { release, reads } = gateLoads(engine);
  void cron.start();
  await settle();
  const closed = cron.close();
  release();
  await closed;
  await cron.ready();
  assert.ok(reads() < 100, `the files after the close are not read (${reads()} read)`);
  assert.equal(state.value.handedUpTo, Date.parse('2026-05-01T09:00:00Z'));
  assert.equal(cron.nextRun('dag0'), undefined);
});

test('ticks handed long after they fell (the process was paused, the clock jumped) are listed as missed, not run at once', async () => {
  const { time, engine, lines, cron } = setup('2026-05-01T09:58:30Z');
  engine.files.set('minutely', dagOf('minutely', 'schedule: "* * * * *"'));
  engine.files.set('daily', dagOf('daily', 'schedule: "0 10 * * *"'));
  await cron.start();
  time.advanceTo('2026-05-01T09:59:00Z');
  // Frozen for three hours: the timer fires once, when the process runs again.
  time.jumpTo('2026-05-01T12:59:30Z');
  time.advanceBy(0);
  await settle();
  assert.deepEqual(engine.calls, [
    '2026-05-01T09:59:00.000Z enqueue minutely',
    '2026-05-01T12:59:30.000Z enqueue minutely',
  ], 'of the minute ticks only the one less than a minute late runs; the daily tick, three hours late, does not');
  assert.equal(cron.missedRuns('minutely').length, MISSED_LISTED);
  assert.equal(cron.missedRuns('minutely').at(-1)?.scheduledAt, '2026-05-01T12:58:00.000Z', 'the newest are kept');
  assert.deepEqual(cron.missedRuns('daily').map((tick) => [tick.scheduledAt, tick.noticedAt]), [['2026-05-01T10:00:00.000Z', '2026-05-01T12:59:30.000Z']]);
  assert.ok(lines.some((line) => line.includes('DAG daily missed its start tick at 2026-05-01T10:00:00.000Z')), lines.join('\n'));
  time.advanceTo('2026-05-01T13:00:00Z');
  await settle();
  assert.deepEqual(engine.calls.slice(2), ['2026-05-01T13:00:00.000Z enqueue minutely'], 'ticks on time run again');
  await cron.close();
});

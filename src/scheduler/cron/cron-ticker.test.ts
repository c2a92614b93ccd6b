// The ticker on an injected clock and timers: ticks reach the callback when they fall, missed
// ticks at start, planner changes re-arm it. Time is moved, never waited for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, type Schedule } from '../../core/index.ts';
import { parseDag } from '../../definition/index.ts';
import { CronPlanner } from './cron-planner.ts';
import { CronTicker } from './cron-ticker.ts';

function scheduleOf(yaml: string): Schedule {
  const { dag, errors } = parseDag(`${yaml}\nsteps:\n  - echo hi\n`, { baseDir: '/dags', fileName: 'demo' });
  assert.deepEqual(errors, []);
  return dag!.schedule;
}

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

function setup(start: string) {
  const time = new ManualClock(start);
  const suspended = new Set<string>();
  const clock = { now: () => time.now() };
  const planner = new CronPlanner({ clock, isSuspended: (fileName) => suspended.has(fileName), timeZone: 'UTC' });
  const handed: string[] = [];
  const ticker = new CronTicker({
    planner, clock, timers: time,
    onTicks: (ticks) => { for (const tick of ticks) handed.push(`${iso(tick.at)} ${tick.fileName} ${tick.kind} at ${iso(time.now())}`); },
  });
  return { time, suspended, planner, ticker, handed };
}

test('each tick reaches the callback at its instant, one timer armed for the soonest', () => {
  const { time, planner, ticker, handed } = setup('2026-05-01T10:00:00Z');
  planner.set('quarter', scheduleOf('schedule: "*/15 * * * *"'));
  planner.set('office', scheduleOf('schedule:\n  start: "20 10 * * *"\n  stop: "40 10 * * *"'));
  ticker.start();
  assert.deepEqual(time.armed, [at('2026-05-01T10:15:00Z')]);
  time.advanceTo('2026-05-01T10:45:00Z');
  assert.deepEqual(handed, [
    '2026-05-01T10:15:00.000Z quarter start at 2026-05-01T10:15:00.000Z',
    '2026-05-01T10:20:00.000Z office start at 2026-05-01T10:20:00.000Z',
    '2026-05-01T10:30:00.000Z quarter start at 2026-05-01T10:30:00.000Z',
    '2026-05-01T10:40:00.000Z office stop at 2026-05-01T10:40:00.000Z',
    '2026-05-01T10:45:00.000Z quarter start at 2026-05-01T10:45:00.000Z',
  ]);
  assert.deepEqual(time.armed, [at('2026-05-01T11:00:00Z')], 'the fired timers are gone, the next is armed');
  ticker.stop();
  assert.deepEqual(time.armed, []);
  time.advanceTo('2026-05-01T12:00:00Z');
  assert.equal(handed.length, 5, 'a stopped ticker hands nothing');
});

test('at start, the ticks missed since the last hand-out are handed at once, then the clock goes on', () => {
  const { time, planner, ticker, handed } = setup('2026-05-01T10:07:00Z');
  const lastRun = at('2026-05-01T09:50:00Z');
  planner.set('quarter', scheduleOf('schedule: "*/15 * * * *"'), lastRun);
  ticker.start(lastRun);
  assert.deepEqual(handed, [
    '2026-05-01T10:00:00.000Z quarter start at 2026-05-01T10:07:00.000Z',
  ]);
  assert.equal(ticker.lastHandedAt, at('2026-05-01T10:07:00Z'));
  time.advanceTo('2026-05-01T10:15:00Z');
  assert.equal(handed.at(-1), '2026-05-01T10:15:00.000Z quarter start at 2026-05-01T10:15:00.000Z');
});

test('planner changes re-arm the timer: added, edited, suspended, resumed and removed DAGs', () => {
  const { time, suspended, planner, ticker, handed } = setup('2026-05-01T10:00:00Z');
  ticker.start();
  assert.deepEqual(time.armed, [], 'nothing scheduled, no timer');
  planner.set('daily', scheduleOf('schedule: "0 12 * * *"'));
  ticker.refresh();
  assert.deepEqual(time.armed, [at('2026-05-01T12:00:00Z')]);
  planner.set('daily', scheduleOf('schedule: "30 10 * * *"'));
  ticker.refresh();
  assert.deepEqual(time.armed, [at('2026-05-01T10:30:00Z')]);
  suspended.add('daily');
  ticker.refresh();
  assert.deepEqual(time.armed, []);
  time.advanceTo('2026-05-01T10:45:00Z');
  suspended.delete('daily');
  planner.skipUntil('daily');
  ticker.refresh();
  assert.deepEqual(handed, [], 'the tick that fell while suspended is not handed');
  assert.deepEqual(time.armed, [at('2026-05-02T10:30:00Z')]);
  planner.remove('daily');
  ticker.refresh();
  assert.deepEqual(time.armed, []);
});

test('a tick months away is reached by waking up on the way', () => {
  const { time, planner, ticker, handed } = setup('2026-05-01T10:00:00Z');
  planner.set('new-year', scheduleOf('schedule: "0 0 1 1 *"'));
  ticker.start();
  assert.deepEqual(time.armed, [at('2026-05-01T10:00:00Z') + 2 ** 31 - 1]);
  time.advanceTo('2027-01-01T00:00:00Z');
  assert.deepEqual(handed, ['2027-01-01T00:00:00.000Z new-year start at 2027-01-01T00:00:00.000Z']);
});

test('a callback that stops the ticker leaves no timer armed', () => {
  const time = new ManualClock('2026-05-01T10:00:00Z');
  const clock = { now: () => time.now() };
  const planner = new CronPlanner({ clock, isSuspended: () => false, timeZone: 'UTC' });
  planner.set('hourly', scheduleOf('schedule: "0 * * * *"'));
  const ticker: CronTicker = new CronTicker({ planner, clock, timers: time, onTicks: () => ticker.stop() });
  ticker.start();
  time.advanceTo('2026-05-01T11:00:00Z');
  assert.deepEqual(time.armed, []);
});

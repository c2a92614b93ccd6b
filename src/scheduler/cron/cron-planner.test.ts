// The planner's view of many DAGs as they are added, edited, renamed, suspended and removed,
// while an injected clock moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schedule } from '../../core/index.ts';
import { parseDag } from '../../definition/index.ts';
import { CronPlanner } from './cron-planner.ts';

function scheduleOf(yaml: string): Schedule {
  const { dag, errors } = parseDag(`${yaml}\nsteps:\n  - echo hi\n`, { baseDir: '/dags', fileName: 'demo' });
  assert.deepEqual(errors, []);
  return dag!.schedule;
}

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function planner(startIso: string) {
  let now = at(startIso);
  const suspended = new Set<string>();
  const cron = new CronPlanner({ clock: { now: () => now }, isSuspended: (fileName) => suspended.has(fileName), timeZone: 'UTC' });
  return { cron, suspended, moveTo: (isoTime: string) => { now = at(isoTime); } };
}

test('next run per DAG follows edits, renames, removals and suspension', () => {
  const { cron, suspended } = planner('2026-05-01T10:00:00Z');
  cron.set('hourly', scheduleOf('schedule: "0 * * * *"'));
  cron.set('nightly', scheduleOf('schedule: "CRON_TZ=Europe/Paris 0 2 * * *"'));
  cron.set('manual', scheduleOf('description: none'));
  cron.set('stops-only', scheduleOf('schedule:\n  stop: "0 18 * * *"'));
  assert.equal(iso(cron.nextRun('hourly')), '2026-05-01T11:00:00.000Z');
  assert.equal(iso(cron.nextRun('nightly')), '2026-05-02T00:00:00.000Z', '02:00 CEST');
  assert.equal(cron.nextRun('manual'), undefined);
  assert.equal(cron.nextRun('stops-only'), undefined, 'a stop tick starts no run');
  assert.equal(cron.nextRun('unknown'), undefined);
  assert.deepEqual(cron.fileNames().sort(), ['hourly', 'nightly', 'stops-only'], 'an unscheduled DAG is not held');

  cron.set('hourly', scheduleOf('schedule: "30 12 * * *"'));
  assert.equal(iso(cron.nextRun('hourly')), '2026-05-01T12:30:00.000Z', 'an edit replaces the schedule');
  cron.rename('hourly', 'midday');
  assert.equal(cron.nextRun('hourly'), undefined);
  assert.equal(iso(cron.nextRun('midday')), '2026-05-01T12:30:00.000Z');
  suspended.add('midday');
  assert.equal(cron.nextRun('midday'), undefined, 'a suspended DAG has no next run');
  suspended.delete('midday');
  cron.remove('midday');
  assert.equal(cron.nextRun('midday'), undefined);
  cron.set('nightly', scheduleOf('description: no longer scheduled'));
  assert.deepEqual(cron.fileNames(), ['stops-only']);
});

test('the soonest tick overall moves with the clock, skips suspended DAGs and sees every kind', () => {
  const { cron, suspended, moveTo } = planner('2026-05-01T10:00:00Z');
  cron.set('a-hourly', scheduleOf('schedule: "0 * * * *"'));
  cron.set('b-half', scheduleOf('schedule:\n  start: "30 * * * *"\n  stop: "45 10 * * *"'));
  cron.set('c-hourly', scheduleOf('schedule: "0 * * * *"'));
  assert.deepEqual(cron.soonest(), { kind: 'start', at: at('2026-05-01T10:30:00Z'), expression: '30 * * * *', fileName: 'b-half' });
  moveTo('2026-05-01T10:30:00Z');
  assert.deepEqual(cron.soonest(), { kind: 'stop', at: at('2026-05-01T10:45:00Z'), expression: '45 10 * * *', fileName: 'b-half' });
  moveTo('2026-05-01T10:50:00Z');
  assert.equal(cron.soonest()?.fileName, 'a-hourly', 'a tie goes to the first file name');
  suspended.add('a-hourly');
  assert.equal(cron.soonest()?.fileName, 'c-hourly');
  suspended.add('b-half');
  suspended.add('c-hourly');
  assert.equal(cron.soonest(), undefined);
});

test('due ticks between two instants name their DAG, oldest first, and leave suspended DAGs out', () => {
  const { cron, suspended } = planner('2026-05-01T10:00:00Z');
  // As at a start: the DAGs were planned before the server went down at 08:00.
  const down = at('2026-05-01T08:00:00Z');
  cron.set('hourly', scheduleOf('schedule: "0 * * * *"'), down);
  cron.set('restarts', scheduleOf('schedule:\n  restart: "15 * * * *"'), down);
  cron.set('paused', scheduleOf('schedule: "*/5 * * * *"'), down);
  suspended.add('paused');
  const { ticks, truncated } = cron.due(at('2026-05-01T08:00:00Z'), at('2026-05-01T10:00:00Z'));
  assert.deepEqual(ticks.map((tick) => `${iso(tick.at)} ${tick.fileName} ${tick.kind}`), [
    '2026-05-01T08:15:00.000Z restarts restart',
    '2026-05-01T09:00:00.000Z hourly start',
    '2026-05-01T09:15:00.000Z restarts restart',
    '2026-05-01T10:00:00.000Z hourly start',
  ]);
  assert.deepEqual(truncated, []);
  suspended.delete('paused');
  const capped = cron.due(at('2026-05-01T08:00:00Z'), at('2026-05-01T10:00:00Z'), 3);
  assert.deepEqual(capped.truncated, ['paused']);
  assert.equal(capped.ticks.filter((tick) => tick.fileName === 'paused').length, 3);
});

test('a DAG added, edited or resumed has no due ticks from before that moment', () => {
  const { cron, suspended, moveTo } = planner('2026-05-01T10:00:00Z');
  const since = at('2026-05-01T09:00:00Z');
  cron.set('old', scheduleOf('schedule: "*/30 * * * *"'), since);
  moveTo('2026-05-01T10:10:00Z');
  cron.set('new', scheduleOf('schedule: "*/30 * * * *"'));
  cron.set('paused', scheduleOf('schedule: "*/30 * * * *"'), since);
  suspended.add('paused');
  moveTo('2026-05-01T11:20:00Z');
  suspended.delete('paused');
  cron.skipUntil('paused');
  cron.rename('old', 'renamed');
  const { ticks } = cron.due(since, at('2026-05-01T11:30:00Z'));
  assert.deepEqual(ticks.map((tick) => `${iso(tick.at)} ${tick.fileName}`), [
    '2026-05-01T09:30:00.000Z renamed',
    '2026-05-01T10:00:00.000Z renamed',
    '2026-05-01T10:30:00.000Z new',
    '2026-05-01T10:30:00.000Z renamed',
    '2026-05-01T11:00:00.000Z new',
    '2026-05-01T11:00:00.000Z renamed',
    '2026-05-01T11:30:00.000Z new',
    '2026-05-01T11:30:00.000Z paused',
    '2026-05-01T11:30:00.000Z renamed',
  ], 'a rename keeps what was due; ticks while suspended are not due');
  cron.skipUntil('unknown');
});

test('next run answers again from its last answer until that tick passes; an edit or an earlier instant asks again', () => {
  const { cron, moveTo } = planner('2026-01-10T07:00:00Z');
  cron.set('daily', scheduleOf('schedule:\n  start: "0 9 * * *"\n  stop: "0 10 * * *"'));
  assert.equal(iso(cron.nextRun('daily')), '2026-01-10T09:00:00.000Z');
  moveTo('2026-01-10T08:59:59Z');
  assert.equal(iso(cron.nextRun('daily')), '2026-01-10T09:00:00.000Z');
  moveTo('2026-01-10T09:00:00Z');
  assert.equal(iso(cron.nextRun('daily')), '2026-01-11T09:00:00.000Z', 'at its tick, the next one');
  assert.equal(iso(cron.nextRun('daily', at('2026-01-10T06:00:00Z'))), '2026-01-10T09:00:00.000Z', 'an earlier instant is asked again');
  cron.set('daily', scheduleOf('schedule: "0 11 * * *"'));
  assert.equal(iso(cron.nextRun('daily')), '2026-01-10T11:00:00.000Z');
});

// Tick times of schedules as the parser reads them, at injected instants: zones, DST changes, gaps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schedule } from '../../core/index.ts';
import { parseDag } from '../../definition/index.ts';
import { compileSchedule, nextTick, nextTicks, previousTick, ticksBetween } from './ticks.ts';

function scheduleOf(yaml: string): Schedule {
  const { dag, errors } = parseDag(`${yaml}\nsteps:\n  - echo hi\n`, { baseDir: '/dags', fileName: 'demo' });
  assert.deepEqual(errors, []);
  return dag!.schedule;
}

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

test('the next tick is strictly after the instant, in the server zone or CRON_TZ', () => {
  const schedule = scheduleOf('schedule:\n  - "0 9 * * *"\n  - "CRON_TZ=Asia/Tokyo 30 18 * * *"');
  const inParis = compileSchedule(schedule, 'Europe/Paris');
  // 09:00 Paris (CET, +01:00) is 08:00Z; 18:30 Tokyo (+09:00) is 09:30Z.
  assert.equal(iso(nextTick(inParis, 'start', at('2026-01-10T07:00:00Z'))?.at), '2026-01-10T08:00:00.000Z');
  const after = nextTick(inParis, 'start', at('2026-01-10T08:00:00Z'));
  assert.deepEqual(after && { ...after, at: iso(after.at) }, { kind: 'start', at: '2026-01-10T09:30:00.000Z', expression: 'CRON_TZ=Asia/Tokyo 30 18 * * *' });
  // A part of a second after a tick is after it: the tick is not given twice.
  assert.equal(iso(nextTick(inParis, 'start', at('2026-01-10T09:30:00.400Z'))?.at), '2026-01-11T08:00:00.000Z');
  assert.equal(iso(nextTick(compileSchedule(schedule, 'America/New_York'), 'start', at('2026-01-10T07:00:00Z'))?.at), '2026-01-10T09:30:00.000Z');
  assert.equal(iso(nextTick(compileSchedule(schedule, 'UTC'), 'start', at('2026-01-10T07:00:00Z'))?.at), '2026-01-10T09:00:00.000Z');
});

test('each kind of the object form has its own next tick; the soonest is among them', () => {
  const compiled = compileSchedule(scheduleOf('schedule:\n  start: "0 8 * * 1-5"\n  stop: ["0 18 * * *", "0 12 * * 6"]\n  restart: "@hourly"'), 'UTC');
  const next = nextTicks(compiled, at('2026-01-10T11:20:00Z')); // a Saturday
  assert.equal(iso(next.start?.at), '2026-01-12T08:00:00.000Z');
  assert.equal(iso(next.stop?.at), '2026-01-10T12:00:00.000Z');
  assert.equal(next.stop?.expression, '0 12 * * 6');
  assert.equal(iso(next.restart?.at), '2026-01-10T12:00:00.000Z');
  assert.equal(next.soonest?.kind, 'stop', 'on a tie, stop comes before restart');
  assert.equal(nextTick(compileSchedule(scheduleOf('schedule:\n  stop: "0 18 * * *"'), 'UTC'), 'start', 0), undefined, 'only start ticks are runs');
});

test('day of month and day of week restrict together with OR, as Vixie cron and Dagu', () => {
  const compiled = compileSchedule(scheduleOf('schedule: "0 0 14 * 5"'), 'UTC');
  const { ticks } = ticksBetween(compiled, at('2026-02-01T00:00:00Z'), at('2026-02-28T00:00:00Z'));
  // The Fridays of February 2026 (6, 13, 20, 27) and the 14th, a Saturday.
  assert.deepEqual(ticks.map((tick) => iso(tick.at)), [
    '2026-02-06T00:00:00.000Z', '2026-02-13T00:00:00.000Z', '2026-02-14T00:00:00.000Z', '2026-02-20T00:00:00.000Z', '2026-02-27T00:00:00.000Z',
  ]);
  const everyFriday = compileSchedule(scheduleOf('schedule: "0 0 * * 5"'), 'UTC');
  assert.equal(ticksBetween(everyFriday, at('2026-02-01T00:00:00Z'), at('2026-02-28T00:00:00Z')).ticks.length, 4, 'a * day of month does not widen the days');
});

test('ticks between two instants: what a scheduler down in between missed, oldest first', () => {
  const compiled = compileSchedule(scheduleOf('schedule:\n  start: ["0 * * * *", "30 1 * * *"]\n  stop: "45 1 * * *"'), 'UTC');
  const { ticks, truncated } = ticksBetween(compiled, at('2026-03-01T00:00:00Z'), at('2026-03-01T02:00:00Z'));
  assert.deepEqual(ticks.map((tick) => `${tick.kind} ${iso(tick.at)}`), [
    'start 2026-03-01T01:00:00.000Z',
    'start 2026-03-01T01:30:00.000Z',
    'stop 2026-03-01T01:45:00.000Z',
    'start 2026-03-01T02:00:00.000Z',
  ], 'the start instant is excluded, the end included');
  assert.equal(truncated, false);
  const long = ticksBetween(compileSchedule(scheduleOf('schedule: "* * * * *"'), 'UTC'), at('2026-03-01T00:00:00Z'), at('2026-03-31T00:00:00Z'), 100);
  assert.equal(long.ticks.length, 100);
  assert.equal(long.truncated, true);
  assert.equal(iso(long.ticks[99].at), '2026-03-01T01:40:00.000Z', 'the oldest ticks are kept');
});

test('two expressions due at the same instant make one tick', () => {
  const compiled = compileSchedule(scheduleOf('schedule:\n  - "0 9 * * *"\n  - "CRON_TZ=UTC 0 9 * * *"\n  - "0 */3 * * *"'), 'UTC');
  const { ticks } = ticksBetween(compiled, at('2026-03-01T08:00:00Z'), at('2026-03-01T12:00:00Z'));
  assert.deepEqual(ticks.map((tick) => iso(tick.at)), ['2026-03-01T09:00:00.000Z', '2026-03-01T12:00:00.000Z']);
});

test('spring forward: a fixed time in the gap ticks at its end; an interval skips the hour that does not exist', () => {
  // Europe/Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z).
  const fixed = compileSchedule(scheduleOf('schedule: "CRON_TZ=Europe/Berlin 30 2 * * *"'));
  assert.deepEqual(ticksBetween(fixed, at('2026-03-27T12:00:00Z'), at('2026-03-31T12:00:00Z')).ticks.map((tick) => iso(tick.at)), [
    '2026-03-28T01:30:00.000Z', // 02:30 CET
    '2026-03-29T01:00:00.000Z', // 03:00 CEST, the end of the gap: the day's run is not lost
    '2026-03-30T00:30:00.000Z', // 02:30 CEST
    '2026-03-31T00:30:00.000Z',
  ]);
  const twiceDaily = compileSchedule(scheduleOf('schedule: "CRON_TZ=Europe/Berlin 30 2,14 * * *"'));
  assert.equal(iso(nextTick(twiceDaily, 'start', at('2026-03-28T14:00:00Z'))?.at), '2026-03-29T01:00:00.000Z', 'a list of hours is a fixed time too');
  const hourly = compileSchedule(scheduleOf('schedule: "CRON_TZ=Europe/Berlin 30 * * * *"'));
  assert.deepEqual(ticksBetween(hourly, at('2026-03-28T23:00:00Z'), at('2026-03-29T02:00:00Z')).ticks.map((tick) => iso(tick.at)), [
    '2026-03-28T23:30:00.000Z', // 00:30 CET
    '2026-03-29T00:30:00.000Z', // 01:30 CET
    '2026-03-29T01:30:00.000Z', // 03:30 CEST: one hour later in real time, no tick in between
  ]);
  // America/New_York, 2026-03-08: 02:00 EST becomes 03:00 EDT (07:00Z). The zone of the server.
  const server = compileSchedule(scheduleOf('schedule: "15 2 * * *"'), 'America/New_York');
  assert.equal(iso(nextTick(server, 'start', at('2026-03-08T05:00:00Z'))?.at), '2026-03-08T07:00:00.000Z');
  assert.equal(iso(nextTick(server, 'start', at('2026-03-08T07:00:00Z'))?.at), '2026-03-09T06:15:00.000Z');
});

test('fall back: a fixed time in the repeated hour ticks once; an interval ticks in each real hour', () => {
  // Europe/Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z); 02:00-03:00 happens twice.
  const fixed = compileSchedule(scheduleOf('schedule: "CRON_TZ=Europe/Berlin 30 2 * * *"'));
  assert.deepEqual(ticksBetween(fixed, at('2026-10-24T12:00:00Z'), at('2026-10-26T12:00:00Z')).ticks.map((tick) => iso(tick.at)), [
    '2026-10-25T00:30:00.000Z', // 02:30 CEST, the first of the two 02:30s
    '2026-10-26T01:30:00.000Z', // 02:30 CET
  ]);
  const hourly = compileSchedule(scheduleOf('schedule: "CRON_TZ=Europe/Berlin 30 * * * *"'));
  assert.deepEqual(ticksBetween(hourly, at('2026-10-24T23:45:00Z'), at('2026-10-25T02:00:00Z')).ticks.map((tick) => iso(tick.at)), [
    '2026-10-25T00:30:00.000Z', // 02:30 CEST
    '2026-10-25T01:30:00.000Z', // 02:30 CET
  ]);
  const server = compileSchedule(scheduleOf('schedule: "30 1 * * *"'), 'America/New_York');
  // 2026-11-01: 02:00 EDT becomes 01:00 EST (06:00Z); 01:30 happens at 05:30Z and 06:30Z.
  assert.deepEqual(ticksBetween(server, at('2026-11-01T04:00:00Z'), at('2026-11-02T12:00:00Z')).ticks.map((tick) => iso(tick.at)), [
    '2026-11-01T05:30:00.000Z',
    '2026-11-02T06:30:00.000Z',
  ]);
});

test('the previous tick is strictly before the instant, the latest of every expression, in its zone', () => {
  const compiled = compileSchedule(scheduleOf('schedule:\n  - "0 9 * * 1-5"\n  - "CRON_TZ=Asia/Tokyo 30 18 * * *"'), 'America/New_York');
  // Monday 2026-01-12 14:00Z is 09:00 in New York: the tick itself is not its own previous tick.
  assert.equal(iso(previousTick(compiled, 'start', at('2026-01-12T14:00:00Z'))), '2026-01-12T09:30:00.000Z');
  assert.equal(iso(previousTick(compiled, 'start', at('2026-01-12T14:00:00.001Z'))), '2026-01-12T14:00:00.000Z');
  // Over a weekend the weekday expression reaches back to Friday; Tokyo's evening is later.
  assert.equal(iso(previousTick(compiled, 'start', at('2026-01-11T12:00:00Z'))), '2026-01-11T09:30:00.000Z');
  assert.equal(previousTick(compiled, 'stop', at('2026-01-11T12:00:00Z')), undefined);
});

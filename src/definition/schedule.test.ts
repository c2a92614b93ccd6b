// schedule in every form: the normalised model, or the exact errors with their paths and lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';

const base = { baseDir: '/dags', fileName: 'demo' };
const withSchedule = (schedule: string) => `${schedule}\nsteps:\n  - echo hi\n`;

test('a single expression, a list, time zone prefixes and the object form', () => {
  const cases: Array<[string, unknown]> = [
    ['schedule: "5 4 * * *"', { start: [{ expression: '5 4 * * *', cron: '5 4 * * *' }], stop: [], restart: [] }],
    ['schedule:\n  - "0 9 * * 1-5"\n  - "CRON_TZ=Asia/Tokyo 30 18 * * *"', {
      start: [{ expression: '0 9 * * 1-5', cron: '0 9 * * 1-5' }, { expression: 'CRON_TZ=Asia/Tokyo 30 18 * * *', cron: '30 18 * * *', timezone: 'Asia/Tokyo' }],
      stop: [], restart: [],
    }],
    ['schedule:\n  start: "0 8 * * *"\n  stop: ["0 18 * * *"]\n  restart: "CRON_TZ=Europe/Paris 0 12 * * *"', {
      start: [{ expression: '0 8 * * *', cron: '0 8 * * *' }],
      stop: [{ expression: '0 18 * * *', cron: '0 18 * * *' }],
      restart: [{ expression: 'CRON_TZ=Europe/Paris 0 12 * * *', cron: '0 12 * * *', timezone: 'Europe/Paris' }],
    }],
    ['schedule: "@daily"', { start: [{ expression: '@daily', cron: '@daily' }], stop: [], restart: [] }],
    ['description: none', { start: [], stop: [], restart: [] }],
  ];
  for (const [yaml, expected] of cases) {
    const { dag, errors } = parseDag(withSchedule(yaml), base);
    assert.deepEqual(errors, [], yaml);
    assert.deepEqual(dag?.schedule, expected, yaml);
  }
});

test('invalid expressions and zones are reported with their paths and lines', () => {
  const { errors } = parseDag(withSchedule([
    'schedule:',
    '  start:',
    '    - "61 * * * *"',
    '    - "CRON_TZ=Mars/Olympus 0 9 * * *"',
    '    - 42',
    '    - "0 0 9 * * *"',
    '    - "@every 5m"',
    '  stop: "CRON_TZ=UTC"',
    '  pause: "0 0 * * *"',
  ].join('\n')), base);
  assert.deepEqual(errors, [
    'schedule.pause (line 9): unknown field "pause"',
    'schedule.start[0] (line 3): invalid cron expression "61 * * * *": CronPattern: Invalid value for minute: 61',
    'schedule.start[1] (line 4): unknown time zone "Mars/Olympus"',
    'schedule.start[2] (line 5): must be a cron expression',
    "schedule.start[3] (line 6): invalid cron expression \"0 0 9 * * *\": 6 fields, 5 expected (minute hour day-of-month month day-of-week)",
    'schedule.start[4] (line 7): invalid cron expression "@every 5m": not one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly',
    'schedule.stop (line 8): CRON_TZ=<zone> must be followed by a space and an expression',
  ]);
});

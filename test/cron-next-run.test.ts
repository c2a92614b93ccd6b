// Each DAG's next scheduled run over HTTP on the real server (GET /dags, GET /dags/{fileName},
// sort=nextRun), with the server's clock injected and moved: no test waits for a tick.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';

const STEPS = 'steps:\n  - echo hi\n';
const DAGS: Record<string, string> = {
  hourly: 'schedule: "0 * * * *"\n',
  listed: 'schedule:\n  - "0 9 * * 1-5"\n  - "CRON_TZ=Asia/Tokyo 30 18 * * *"\n',
  tokyo: 'schedule: "CRON_TZ=Asia/Tokyo 0 9 * * *"\n',
  office: 'schedule:\n  start: "0 8 * * *"\n  stop: "0 18 * * *"\n',
  'stops-only': 'schedule:\n  stop: "0 18 * * *"\n',
  paused: 'schedule: "*/5 * * * *"\n',
  manual: 'description: started by hand\n',
};

for (const carrier of ['uws', 'node'] as const) {
  describe(`next runs on ${carrier}`, () => {
    let server: TestServer;
    // 2026-03-08 06:30Z is 01:30 EST in New York, half an hour before clocks spring forward to 03:00 EDT.
    let now = Date.parse('2026-03-08T06:30:00Z');
    before(async () => {
      server = await startTestServer(carrier, { clock: { now: () => now }, timeZone: 'America/New_York' });
      for (const [name, schedule] of Object.entries(DAGS)) {
        assert.equal((await server.call('POST', '/dags', { name, spec: schedule + STEPS })).status, 201, name);
      }
      await server.writeDag('broken', 'schedule: "0 25 * * *"\n' + STEPS);
      assert.equal((await server.call('POST', '/dags/paused/suspend', { suspend: true })).status, 200);
    });
    after(() => server.close());

    const nextRuns = async (query = '') => {
      const { status, body } = await server.call('GET', `/dags${query}`);
      assert.equal(status, 200);
      return body.dags.map((item: { fileName: string; nextRun: string | null }) => [item.fileName, item.nextRun]);
    };

    test('every schedule form gets its next start; unscheduled, stop-only, suspended and broken DAGs get null', async () => {
      assert.deepEqual(await nextRuns('?sort=nextRun'), [
        ['hourly', '2026-03-08T07:00:00.000Z'], // 03:00 EDT: 02:00 does not exist that night
        ['listed', '2026-03-08T09:30:00.000Z'], // 18:30 in Tokyo, before 09:00 on Monday in New York
        ['office', '2026-03-08T12:00:00.000Z'], // 08:00 EDT
        ['tokyo', '2026-03-09T00:00:00.000Z'], // 09:00 in Tokyo
        ['broken', null],
        ['manual', null],
        ['paused', null],
        ['stops-only', null],
      ]);
      const { body } = await server.call('GET', '/dags?name=broken');
      assert.match(body.dags[0].errors.join(), /invalid cron expression "0 25 \* \* \*"/);
    });

    test('the details of a DAG carry its next run, which follows suspension, edits and renames', async () => {
      assert.equal((await server.call('GET', '/dags/office')).body.nextRun, '2026-03-08T12:00:00.000Z');
      assert.equal((await server.call('GET', '/dags/paused')).body.nextRun, null);
      assert.equal((await server.call('POST', '/dags/paused/suspend', { suspend: false })).status, 200);
      assert.equal((await server.call('GET', '/dags/paused')).body.nextRun, '2026-03-08T06:35:00.000Z');
      assert.equal((await server.call('POST', '/dags/paused/suspend', { suspend: true })).status, 200);

      const edited = await server.call('PUT', '/dags/manual/spec', { spec: 'schedule: "CRON_TZ=UTC 0 0 1 1 *"\n' + STEPS });
      assert.deepEqual(edited.body.errors, []);
      assert.equal((await server.call('GET', '/dags/manual')).body.nextRun, '2027-01-01T00:00:00.000Z');
      assert.equal((await server.call('POST', '/dags/manual/rename', { newFileName: 'yearly' })).status, 200);
      assert.equal((await server.call('GET', '/dags/yearly')).body.nextRun, '2027-01-01T00:00:00.000Z');
      assert.equal((await server.call('PUT', '/dags/yearly/spec', { spec: STEPS })).status, 200);
      assert.equal((await server.call('GET', '/dags/yearly')).body.nextRun, null);
    });

    test('sort=nextRun follows the clock; desc puts the latest first and keeps the unscheduled last', async () => {
      now = Date.parse('2026-03-08T09:45:00Z');
      const scheduled = [
        ['hourly', '2026-03-08T10:00:00.000Z'],
        ['office', '2026-03-08T12:00:00.000Z'],
        ['tokyo', '2026-03-09T00:00:00.000Z'],
        ['listed', '2026-03-09T09:30:00.000Z'],
      ];
      const unscheduled = [['broken', null], ['paused', null], ['stops-only', null], ['yearly', null]];
      assert.deepEqual(await nextRuns('?sort=nextRun'), [...scheduled, ...unscheduled]);
      assert.deepEqual(await nextRuns('?sort=nextRun&order=desc'), [...scheduled.reverse(), ...unscheduled.reverse()]);
      assert.deepEqual(await nextRuns('?sort=nextRun&perPage=3&page=2'), [['listed', '2026-03-09T09:30:00.000Z'], ['broken', null], ['paused', null]]);
      assert.deepEqual((await nextRuns()).map(([name]: [string]) => name), ['broken', 'hourly', 'listed', 'office', 'paused', 'stops-only', 'tokyo', 'yearly']);
      // A tie on the instant goes by name.
      assert.equal((await server.call('POST', '/dags', { name: 'also-hourly', spec: DAGS.hourly + STEPS })).status, 201);
      assert.deepEqual((await nextRuns('?sort=nextRun&perPage=2')), [['also-hourly', '2026-03-08T10:00:00.000Z'], ['hourly', '2026-03-08T10:00:00.000Z']]);
    });
  });
}

test('without an injected clock or zone, next runs come from the system clock in the server zone', async () => {
  const server = await startTestServer('node');
  try {
    await server.writeDag('new-year-utc', 'schedule: "CRON_TZ=UTC 0 0 1 1 *"\n' + STEPS);
    await server.writeDag('new-year-local', 'schedule: "0 0 1 1 *"\n' + STEPS);
    // Files written by hand reach the scheduler through the directory watch, a moment later.
    const nextRun = async (fileName: string) => (await server.call('GET', `/dags/${fileName}`)).body.nextRun;
    assert.ok(await waitUntil(async () => (await nextRun('new-year-utc')) !== null && (await nextRun('new-year-local')) !== null));
    const year = new Date().getUTCFullYear() + 1;
    assert.equal((await server.call('GET', '/dags/new-year-utc')).body.nextRun, `${year}-01-01T00:00:00.000Z`);
    // The server runs in this process, so its zone is the one `new Date(y, m, d)` reads.
    const local = new Date(new Date().getFullYear() + 1, 0, 1).toISOString();
    assert.equal((await server.call('GET', '/dags/new-year-local')).body.nextRun, local);
  } finally {
    await server.close();
  }
});

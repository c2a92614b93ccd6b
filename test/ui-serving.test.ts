// The dashboard's files, served at `/` beside the API on both carriers: index.html for every page's
// path (a deep link reloads the page it names), the hashed assets kept by browsers, gzipped when
// asked; nothing outside what the build wrote; and nothing at all with the dashboard turned off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { describeOnCarriers, startTestServer } from './helpers.ts';

/** A plain GET or HEAD outside the API (no JSON checks: these are the dashboard's files). */
async function get(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const response = await request(url, { method, headers });
  const body = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers as Record<string, string>, body };
}

describeOnCarriers('the dashboard\'s files', (server) => {
  const origin = () => new URL(server.base).origin;

  test('/ is the page: HTML that loads the hashed script, asked for again each time, framed by no other site', async () => {
    const page = await get(`${origin()}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'], /^text\/html/);
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(page.headers['content-security-policy'], /default-src 'self'/);
    assert.match(page.headers['content-security-policy'], /frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.match(page.body.toString(), /<script type="module" src="\/assets\/[^"]+\.js"/);
  });

  test('every page\'s path is the same page (a deep link); an asset or file the build did not write is 404', async () => {
    const page = (await get(`${origin()}/`)).body.toString();
    for (const path of ['/dags', '/dags/etl-nightly', '/runs/etl/0195f2a0-7000-7000-8000-000000000000', '/queues', '/login']) {
      const answer = await get(`${origin()}${path}`);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.body.toString(), page, path);
    }
    for (const path of ['/assets/app-missing.js', '/favicon-missing.png', '/assets/../index.html.gz', '/%2e%2e/package.json']) {
      const answer = await get(`${origin()}${path}`);
      assert.equal(answer.status, 404, path);
      assert.equal(JSON.parse(answer.body.toString()).code, 'not_found', path);
    }
  });

  test('an asset: JavaScript kept a year, gzipped when asked (the same bytes once unzipped), 304 when unchanged', async () => {
    const script = /src="(\/assets\/[^"]+\.js)"/.exec((await get(`${origin()}/`)).body.toString())![1];
    const plain = await get(`${origin()}${script}`);
    assert.equal(plain.status, 200);
    assert.match(plain.headers['content-type'], /^text\/javascript/);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(plain.headers['content-encoding'], undefined);
    const zipped = await get(`${origin()}${script}`, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'accept-encoding');
    assert.ok(zipped.body.length < plain.body.length);
    assert.deepEqual(gunzipSync(zipped.body), plain.body);
    const again = await get(`${origin()}${script}`, { 'if-none-match': plain.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const head = await get(`${origin()}${script}`, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers['content-length']), plain.body.length);
    assert.equal(head.body.length, 0);
  });

  test('the API stays the API: its 404 is the error document, and a write to a page path is refused', async () => {
    const missing = await get(`${server.base}/no-such-route`);
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString()).code, 'not_found');
    const posted = await request(`${origin()}/dags`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(posted.statusCode, 404);
    assert.equal((await posted.body.json() as { code: string }).code, 'not_found');
  });
});

test('with the dashboard off (--no-ui, ui: false, TROUPE_UI=false) / is a 404 and the API is served', async (t) => {
  const server = await startTestServer('uws', { ui: false });
  t.after(() => server.close());
  const page = await get(`${new URL(server.base).origin}/`);
  assert.equal(page.status, 404);
  assert.match(JSON.parse(page.body.toString()).message, /no route for \//);
  assert.equal((await server.call('GET', '/health')).status, 200);
});

// Requests a test makes outside TestServer.call (fetch with its own headers, a raw socket, the fuzz
// client) are held to the OpenAPI document too: a server that answers like troupe but drifts from
// the document fails each of them, naming the route, the status and the schema path. And no test
// calls `fetch` bare: an answer kept out of the check says why.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkedFetch, checkRaw, uncheckedFetch } from './helpers.ts';
import { exchange } from './raw-http.ts';
import { FuzzClient } from './fuzz/harness.ts';

/** `GET /dags/tags` whose tags are numbers, where the document says strings. */
const DRIFTING_TAGS = '{"tags":[1]}';
const TAGS_DRIFT = /GET \/dags\/tags answered 200: body\/tags\/0 must be string .*\(schema #\/\S+\/type\)/;

describe('raw requests are checked against the OpenAPI document', () => {
  let drifting: Server;
  let origin: string;
  before(async () => {
    drifting = createServer((req, res) => {
      const [status, body] = req.url === '/api/v2/dags/tags' ? [200, DRIFTING_TAGS]
        : req.url === '/api/v2/health' ? [418, '{"code":"teapot","message":"short and stout"}']
        : req.url === '/api/v2/no-such-route' ? [404, '{"error":"not here"}']
        : [200, '{"not":"the API"}'];
      res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
      res.end(body);
    });
    await new Promise<void>((resolve) => drifting.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(drifting.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => {
    drifting.closeAllConnections();
    drifting.close(() => resolve());
  }));

  test('checkedFetch rejects a body or a status the document does not describe, an error that is no error document; a URL outside the API passes', async () => {
    await assert.rejects(checkedFetch(`${origin}/api/v2/dags/tags`, { headers: { accept: 'application/json' } }), TAGS_DRIFT);
    await assert.rejects(checkedFetch(`${origin}/api/v2/health`, { method: 'GET' }), /GET \/health answered 418, a status the document does not list for it/);
    // A path no operation holds must still answer an error with the error document.
    await assert.rejects(checkedFetch(`${origin}/api/v2/no-such-route`), /GET \/no-such-route \(no operation\) answered 404: body must have required property 'code' .*\(schema #\/components\/schemas\/Error\/required\)/);
    const outside = await checkedFetch(`${origin}/elsewhere`);
    assert.deepEqual(await outside.json(), { not: 'the API' });
  });

  test('checkedFetch leaves the body to the caller', async () => {
    const response = await checkedFetch(`${origin}/elsewhere/api/v2`);
    assert.equal(await response.text(), '{"not":"the API"}');
  });

  test('an unchecked fetch goes out as it is, and only with its reason', async () => {
    assert.equal(await (await uncheckedFetch('this test shows the exemption', `${origin}/api/v2/dags/tags`)).text(), DRIFTING_TAGS);
    assert.throws(() => uncheckedFetch(' ', `${origin}/api/v2/dags/tags`), /needs the reason/);
  });

  test('checkRaw rejects a drifting answer read off a socket', async () => {
    const port = Number(new URL(origin).port);
    const { responses } = await exchange(port, 'GET /api/v2/dags/tags HTTP/1.1\r\nHost: troupe\r\n\r\n', { expect: 1 });
    assert.equal(responses[0].body, DRIFTING_TAGS);
    await assert.rejects(checkRaw('GET', '/dags/tags', responses[0]), TAGS_DRIFT);
  });

  test('the fuzz client fails a drifting answer', async () => {
    const client = new FuzzClient(Number(new URL(origin).port));
    try {
      await assert.rejects(client.send({ method: 'GET', path: '/api/v2/dags/tags' }), TAGS_DRIFT);
    } finally {
      client.close();
    }
  });
});

/**
 * Test files whose bare `fetch` calls wait on another branch that edits them; each says why. The
 * list empties as they switch to checkedFetch.
 */
const PENDING: Record<string, string> = {};

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? testFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('no test calls fetch bare: each uses checkedFetch, or uncheckedFetch with its reason', () => {
  const root = join(import.meta.dirname, '..');
  const bare = testFiles(import.meta.dirname)
    .map((path) => relative(root, path))
    // openapi-check.ts holds the wrappers themselves.
    .filter((path) => path !== 'test/openapi-check.ts')
    .filter((path) => /(?<![\w.$])fetch\(/.test(readFileSync(join(root, path), 'utf8')));
  assert.deepEqual(bare.filter((path) => !(path in PENDING)), []);
  assert.deepEqual(Object.keys(PENDING).filter((path) => !bare.includes(path)), [], 'a pending file that calls checkedFetch now leaves PENDING');
});

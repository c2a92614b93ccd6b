import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, COMPRESSED_FROM, compressLarge } from './compressed-answers.ts';
import { Cors } from './cors.ts';

test('Accept-Encoding: gzip is accepted when named or covered by *, with a weight above 0', () => {
  for (const header of ['gzip', 'GZIP', 'deflate, gzip', 'gzip;q=0.5', 'br;q=1.0, gzip; q=0.8', '*', 'x-gzip', 'deflate, *;q=0.1']) assert.equal(acceptsGzip(header), true, header);
  for (const header of [undefined, '', 'identity', 'br, deflate', 'gzip;q=0', 'gzip; q=0.000', '*;q=0', '*, gzip;q=0', 'gzipx']) assert.equal(acceptsGzip(header), false, String(header));
});

test('only a Buffer body of 1 MiB or more, not encoded yet, is compressed; Vary is kept and extended', async () => {
  const large = Buffer.alloc(COMPRESSED_FROM, 'a');
  const zipped = await compressLarge({ 'accept-encoding': 'gzip' }, { status: 200, headers: { 'content-type': 'application/json', vary: 'origin' }, body: large });
  assert.equal(zipped.headers?.['content-encoding'], 'gzip');
  assert.equal(zipped.headers?.vary, 'origin, accept-encoding');
  assert.ok(gunzipSync(zipped.body as Buffer).equals(large));
  // Made once for the same bytes.
  assert.equal((await compressLarge({ 'accept-encoding': 'gzip' }, { status: 200, body: large })).body, zipped.body);
  const small = { status: 200, body: Buffer.alloc(COMPRESSED_FROM - 1, 'a') };
  assert.equal(await compressLarge({ 'accept-encoding': 'gzip' }, small), small);
  const encoded = { status: 200, headers: { 'content-encoding': 'gzip' }, body: large };
  assert.equal(await compressLarge({ 'accept-encoding': 'gzip' }, encoded), encoded);
  const text = { status: 200, body: 'a'.repeat(COMPRESSED_FROM) };
  assert.equal(await compressLarge({ 'accept-encoding': 'gzip' }, text), text);
});

test('CORS adds Origin to the Vary of a compressed answer, keeping accept-encoding', async () => {
  const zipped = await compressLarge({ 'accept-encoding': 'gzip' }, { status: 200, body: Buffer.alloc(COMPRESSED_FROM, 'b') });
  const request = { method: 'GET', path: '/api/v2/dag-runs', query: '', headers: { origin: 'https://app.example.com', 'accept-encoding': 'gzip' }, body: undefined };
  const decorated = new Cors({ allowOrigins: ['https://app.example.com'] }).decorate(request, zipped);
  assert.equal(decorated.headers?.vary, 'accept-encoding, Origin');
  assert.equal(decorated.headers?.['access-control-allow-origin'], 'https://app.example.com');
});

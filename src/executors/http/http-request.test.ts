import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalHeaderName, parseHttpStep, responseHead } from './http-request.ts';

test('the head prints as Go writes it: status, then canonical names sorted, a line per value, CRLF, no Transfer-Encoding', () => {
  const head = responseHead(200, 'OK', { 'x-b': '1', 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'transfer-encoding': 'chunked' });
  assert.equal(head, '200 OK\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-B: 1\r\n');
  assert.equal(responseHead(204, '', {}), '204\n');
});

test('canonical header names follow Go: each word capitalised; a name with other characters is kept', () => {
  assert.deepEqual(['content-type', 'x-request-id', 'WWW-AUTHENTICATE', 'etag', 'bad name'].map(canonicalHeaderName), ['Content-Type', 'X-Request-Id', 'Www-Authenticate', 'Etag', 'bad name']);
});

test('config query parameters follow the URL\'s own, sorted by name, form-encoded; the method is upper-cased', () => {
  const parsed = parseHttpStep('post  http://h/p?b=2 ', { query: { z: 'a b', a: 1 }, timeout: 3, silent: true });
  assert.equal(parsed.kind, 'ok');
  if (parsed.kind !== 'ok') return;
  assert.equal(parsed.value.url.href, 'http://h/p?b=2&a=1&z=a+b');
  assert.deepEqual([parsed.value.method, parsed.value.timeoutMs, parsed.value.silent, parsed.value.skipTLSVerify], ['POST', 3000, true, false]);
  assert.equal(parseHttpStep('GET', {}).kind, 'error');
  assert.deepEqual(parseHttpStep('GET not a url', {}), { kind: 'error', message: 'http: invalid URL "not a url"' });
});

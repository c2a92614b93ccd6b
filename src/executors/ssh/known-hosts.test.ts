import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkHostKey, hostMatches, type HostKeyVerdict } from './known-hosts.ts';

const messageOf = (verdict: HostKeyVerdict) => ('message' in verdict ? verdict.message : '');

/** A key blob as the server sends it: a length-prefixed type name, then the key's bytes. */
function blob(type: string, bytes: string): Buffer {
  const name = Buffer.from(type);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(name.length);
  return Buffer.concat([length, name, Buffer.from(bytes)]);
}

const KEY = blob('ssh-ed25519', 'server key');
const OTHER = blob('ssh-ed25519', 'another key');
const line = (hosts: string, key: Buffer, marker = '') => `${marker}${marker ? ' ' : ''}${hosts} ssh-ed25519 ${key.toString('base64')}`;

test('host patterns: lists, * and ?, negation wins, [host]:port for ports other than 22, case ignored', () => {
  assert.ok(hostMatches('a.example.com,b.example.com', 'b.example.com'));
  assert.ok(hostMatches('*.example.com', 'a.example.com'));
  assert.ok(hostMatches('host?', 'host1'));
  assert.ok(!hostMatches('*.example.com,!bad.example.com', 'bad.example.com'));
  assert.ok(!hostMatches('!bad.example.com', 'good.example.com'));
  assert.ok(hostMatches('[10.0.0.1]:2222', '[10.0.0.1]:2222'));
  assert.ok(!hostMatches('10.0.0.1', '[10.0.0.1]:2222'));
  assert.ok(!hostMatches('a.b', 'axb'));
  assert.equal(checkHostKey(line('Server.Example.COM', KEY), 'kh', 'server.example.com', 22, KEY).kind, 'known');
  assert.equal(checkHostKey(line('server', KEY), 'kh', 'SERVER', 22, KEY).kind, 'known');
});

test('a host listed with another key is a mismatch naming the lines; one not listed is unknown; comments and @cert-authority lines are skipped', () => {
  const text = ['# comment', '', line('*', KEY, '@cert-authority'), line('server', OTHER), line('elsewhere', KEY)].join('\n');
  const mismatch = checkHostKey(text, '/kh', 'server', 22, KEY);
  assert.equal(mismatch.kind, 'mismatch');
  assert.match(messageOf(mismatch), /the ssh-ed25519 key of server \(SHA256:[A-Za-z0-9+/]+\) does not match the key listed for it in \/kh \(line 4\)/);
  const unknown = checkHostKey(text, '/kh', 'other', 2222, KEY);
  assert.equal(unknown.kind, 'unknown');
  assert.match(messageOf(unknown), /\[other\]:2222 .* is not in \/kh; add it \(ssh-keyscan -p 2222 other >> \/kh\)/);
  // A host listed with both keys is known by either (as during a key rotation).
  assert.equal(checkHostKey([line('server', OTHER), line('server', KEY)].join('\n'), 'kh', 'server', 22, KEY).kind, 'known');
});

test('a key marked @revoked is refused even when also listed', () => {
  const text = [line('*', KEY, '@revoked'), line('server', KEY)].join('\n');
  const verdict = checkHostKey(text, '/kh', 'server', 22, KEY);
  assert.equal(verdict.kind, 'revoked');
  assert.match(messageOf(verdict), /is marked revoked in \/kh:1/);
});

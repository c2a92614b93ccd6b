import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readMailConfig, readSmtpServer } from './mail-config.ts';

test('to is one address or a list; blank entries (an unset variable) are dropped; none at all is an error', () => {
  const read = (to: unknown) => readMailConfig({ to }, '/w');
  assert.deepEqual(read('a@example.com'), { ok: true, value: { to: ['a@example.com'], subject: '', message: '', html: false, attachments: [] } });
  assert.deepEqual(read([' a@example.com ', '', 'b@example.com']), {
    ok: true, value: { to: ['a@example.com', 'b@example.com'], subject: '', message: '', html: false, attachments: [] },
  });
  assert.deepEqual(read(''), { ok: false, error: 'no recipient: config.to is empty' });
  assert.deepEqual(read(undefined), { ok: false, error: 'no recipient: config.to is empty' });
  assert.deepEqual(read([1]), { ok: false, error: 'config.to must be an address or a list of addresses' });
});

test('contentType is text/plain (the default) or text/html; attachments resolve against the working directory', () => {
  const html = readMailConfig({ to: 'a@example.com', contentType: 'Text/HTML', attachments: ['r.txt', '/abs/x.csv'] }, '/work/dir');
  assert.ok(html.ok);
  assert.equal(html.value.html, true);
  assert.deepEqual(html.value.attachments, ['/work/dir/r.txt', '/abs/x.csv']);
  assert.deepEqual(readMailConfig({ to: 'a@example.com', contentType: 'application/json' }, '/w'),
    { ok: false, error: 'config.contentType "application/json" is not supported: use text/plain or text/html' });
  assert.deepEqual(readMailConfig({ to: 'a@example.com', attachments: 'r.txt' }, '/w'), { ok: false, error: 'config.attachments must be a list of file paths' });
  assert.deepEqual(readMailConfig({ to: 'a@example.com', subject: 3 }, '/w'), { ok: false, error: 'config.subject must be a string' });
});

test('the smtp server needs a host; its port defaults to 587 and must be a port number', () => {
  assert.deepEqual(readSmtpServer(undefined), { ok: false, error: 'no SMTP server: the DAG\'s smtp.host is not set' });
  assert.deepEqual(readSmtpServer({ host: 'mx' }), { ok: true, value: { host: 'mx', port: 587 } });
  assert.deepEqual(readSmtpServer({ host: 'mx', port: '465', username: 'u', password: 'p' }), { ok: true, value: { host: 'mx', port: 465, username: 'u', password: 'p' } });
  assert.deepEqual(readSmtpServer({ host: 'mx', port: '70000' }), { ok: false, error: 'smtp.port "70000" is not a port number' });
});

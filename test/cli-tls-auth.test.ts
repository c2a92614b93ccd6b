// The command and a server that serves HTTPS and asks for a token: the home's lock gives the https
// address, TROUPE_TOKEN is sent as a Bearer token, and what is missing (the token, trust in the
// certificate) is named with its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import { startTestServer } from './helpers.ts';
import { assertDocumentedAt } from './openapi-check.ts';
import { PASSES, makeHome, troupe } from './cli-run.ts';

test('over HTTPS with authentication: the lock names the https URL; the token and the CA come from the environment', async (t) => {
  const home = await makeHome({ passes: PASSES });
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048, algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const certFile = join(home.dir, 'cert.pem');
  const keyFile = join(home.dir, 'key.pem');
  await writeFile(certFile, pems.cert);
  await writeFile(keyFile, pems.private);
  const server = await startTestServer('uws', { home: home.dir, tls: { certFile, keyFile }, auth: { mode: 'builtin', token: 'ci-token', admin: { username: 'admin', password: 'a-long-admin-password' } } });
  t.after(() => server.close());

  const untrusted = await troupe(['status', ...home.flag], { TROUPE_TOKEN: 'ci-token' });
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stderr, /^troupe: the certificate of the troupe server at https:\/\/127\.0\.0\.1:\d+\/api\/v2 is not trusted \(\w+\): trust its CA with NODE_EXTRA_CA_CERTS=<ca\.pem>\n$/);

  const trusted = { NODE_EXTRA_CA_CERTS: certFile };
  const anonymous = await troupe(['start', 'passes', ...home.flag], trusted);
  assert.equal(anonymous.code, 1);
  assert.match(anonymous.stderr, /^troupe: the server at https:\/\/127\.0\.0\.1:\d+\/api\/v2 requires authentication.*: pass --token or set TROUPE_TOKEN\n$/);
  const wrong = await troupe(['start', 'passes', '--token', 'not-it', ...home.flag], trusted);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /requires authentication/);
  assert.doesNotMatch(wrong.stderr + wrong.stdout, /not-it/, 'the token is never printed');

  const started = await troupe(['start', 'passes', '-r', 'secure-1', ...home.flag], { ...trusted, TROUPE_TOKEN: 'ci-token' });
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stdout, /dag-run passes secure-1: succeeded/);
  assert.doesNotMatch(started.stdout + started.stderr, /ci-token/);
  // The server's run: read through its API with the token, trusting its certificate.
  const agent = new Agent({ connect: { ca: pems.cert } });
  t.after(() => agent.close());
  const url = `${server.base.replace('http:', 'https:')}/dag-runs/passes/secure-1`;
  const answer = await request(url, { dispatcher: agent, headers: { authorization: 'Bearer ci-token' } });
  const text = await answer.body.text();
  await assertDocumentedAt('GET', url, { status: answer.statusCode, contentType: String(answer.headers['content-type'] ?? ''), text });
  assert.equal(answer.statusCode, 200);
  assert.equal(JSON.parse(text).dagRun.status, 4);
});

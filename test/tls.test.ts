// HTTPS: tls.certFile / tls.keyFile (TROUPE_CERT_FILE / TROUPE_KEY_FILE) on both carriers, through
// the command, the embedding API and a remote node; a bad pair stops the start with one line naming
// the file. The certificates are made here, self-signed for 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import { createServer } from '../src/index.ts';
import { resolveConfig } from '../src/config/index.ts';
import { HELLO, startTestServer, type TestServer } from './helpers.ts';
import { exchange } from './raw-http.ts';
import { assertDocumentedAt } from './openapi-check.ts';
import { cli, exited, startCli } from './cli-process.ts';

interface Pair {
  cert: string;
  key: string;
}

/** A self-signed certificate for 127.0.0.1 (its own CA: a client trusts it by taking it as `ca`). */
async function selfSigned(passphrase?: string): Promise<Pair> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
    ...(passphrase ? { passphrase } : {}),
  });
  return { cert: pems.cert, key: pems.private };
}

/** A request over HTTPS trusting `ca` (undefined: the system's roots only). */
async function call(base: string, method: string, path: string, ca: string | undefined, body?: unknown) {
  const agent = new Agent({ connect: ca ? { ca } : {} });
  try {
    const answer = await request(`${base}${path}`, {
      method: method as 'GET', dispatcher: agent,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.body.text();
    await assertDocumentedAt(method, `${base}${path}`, { status: answer.statusCode, contentType: String(answer.headers['content-type'] ?? '') || null, text });
    return { status: answer.statusCode, text, body: text ? JSON.parse(text) : undefined, headers: answer.headers };
  } finally {
    await agent.close();
  }
}

function errorCode(error: unknown): string | undefined {
  for (let current = error; current && typeof current === 'object'; current = (current as { cause?: unknown }).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** `troupe start-all` run to its end: its exit code and what it printed. */
function runToExit(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

let dir: string;
let pair: Pair;
let certFile: string;
let keyFile: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'troupe-tls-'));
  pair = await selfSigned();
  certFile = join(dir, 'cert.pem');
  keyFile = join(dir, 'key.pem');
  await writeFile(certFile, pair.cert);
  await writeFile(keyFile, pair.key, { mode: 0o600 });
});

after(() => rm(dir, { recursive: true, force: true }));

for (const carrier of ['uws', 'node'] as const) {
  describe(`HTTPS on ${carrier}`, () => {
    let server: TestServer;
    let base: string;
    before(async () => {
      server = await startTestServer(carrier, { tls: { certFile, keyFile } });
      base = `https://127.0.0.1:${server.troupe.server.port}/api/v2`;
    });
    after(() => server?.close());

    test('the server says it serves https, on the carrier asked for', () => {
      assert.equal(server.troupe.server.scheme, 'https');
      assert.equal(server.troupe.server.carrier, carrier);
    });

    test('a client that trusts the certificate gets the API: health, a DAG, a run and its log', async () => {
      const health = await call(base, 'GET', '/health', pair.cert);
      assert.equal(health.status, 200, health.text);
      assert.equal(health.body.status, 'healthy');
      await server.writeDag('tls_hello', HELLO);
      const dag = await call(base, 'GET', '/dags/tls_hello', pair.cert);
      assert.equal(dag.status, 200, dag.text);
      assert.equal(dag.body.dag.name, 'tls_hello');
      const started = await call(base, 'POST', '/dags/tls_hello/start', pair.cert, { params: 'NAME=tls' });
      assert.equal(started.status, 200, started.text);
      let run = await call(base, 'GET', `/dag-runs/tls_hello/${started.body.dagRunId}`, pair.cert);
      for (let polls = 0; run.status === 200 && [0, 1, 5].includes(run.body.dagRun.status) && polls < 1500; polls++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        run = await call(base, 'GET', `/dag-runs/tls_hello/${started.body.dagRunId}`, pair.cert);
      }
      assert.equal(run.body.dagRun.statusLabel, 'succeeded', run.text);
      const log = await call(base, 'GET', `/dag-runs/tls_hello/${started.body.dagRunId}/steps/s1/log`, pair.cert);
      assert.equal(log.status, 200, log.text);
      assert.match(log.body.content, /hello tls/);
    });

    test('the session cookie a sign-in sets over HTTPS is Secure', async () => {
      const secured = await startTestServer(carrier, { tls: { certFile, keyFile }, auth: { mode: 'builtin', admin: { username: 'tls-admin', password: 'tls-password-1' } } });
      try {
        const securedBase = `https://127.0.0.1:${secured.troupe.server.port}/api/v2`;
        const login = await call(securedBase, 'POST', '/auth/login', pair.cert, { username: 'tls-admin', password: 'tls-password-1' });
        assert.equal(login.status, 200, login.text);
        assert.match(String(login.headers['set-cookie']), /^troupe_session=[^;]+;.*\bSecure\b/i);
        assert.match(String(login.headers['set-cookie']), /HttpOnly/i);
      } finally {
        await secured.close();
      }
    });

    test('a client that does not trust the certificate is refused at the handshake', async () => {
      await assert.rejects(call(base, 'GET', '/health', undefined), (error: unknown) => {
        assert.match(errorCode(error) ?? '', /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
        return true;
      });
    });

    test('plain HTTP to the HTTPS port gets no API answer', async () => {
      // Not checked against the OpenAPI document: what comes back is the TLS layer's, no API answer.
      const plain = await exchange(server.troupe.server.port, 'GET /api/v2/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { settleMs: 3000 });
      assert.equal(plain.responses.some((response) => response.status === 200 || response.body.includes('healthy')), false, JSON.stringify(plain));
      assert.doesNotMatch(plain.rest, /healthy/);
      assert.equal(plain.closed, true);
    });
  });
}

describe('HTTPS settings', () => {
  test("config.yaml's tls keys ignore case as Dagu's do; tls.caFile is read and reported unused", async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-tls-config-'));
    try {
      await writeFile(join(home, 'config.yaml'), 'tls:\n  CertFile: cert.pem\n  keyfile: /etc/troupe/key.pem\n  caFile: /etc/troupe/ca.pem\n');
      const config = await resolveConfig({ home }, {});
      assert.deepEqual(config.tls, { certFile: join(process.cwd(), 'cert.pem'), keyFile: '/etc/troupe/key.pem' });
      assert.deepEqual(config.warnings, ['config file: ignoring keys troupe does not use: tls.caFile']);
      const fromEnv = await resolveConfig({ home }, { TROUPE_KEY_FILE: '/run/secrets/key.pem' });
      assert.equal(fromEnv.tls?.keyFile, '/run/secrets/key.pem');
      assert.equal(fromEnv.tls?.certFile, join(process.cwd(), 'cert.pem'));
      await writeFile(join(home, 'config.yaml'), 'tls:\n  keyFile: [a, b]\n');
      await assert.rejects(resolveConfig({ home }, {}), /tls\.keyFile must be a file path/);
      await writeFile(join(home, 'config.yaml'), 'port: 9000\n');
      assert.equal((await resolveConfig({ home }, { TROUPE_CERT_FILE: '', TROUPE_KEY_FILE: '' })).tls, undefined);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('HTTPS through the command', () => {
  test('config.yaml tls.certFile/keyFile on uws: the start line says https and the API answers there', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-tls-home-'));
    await writeFile(join(home, 'config.yaml'), `tls:\n  certFile: ${certFile}\n  keyFile: ${keyFile}\n`);
    const server = await startCli(['--home', home, '--port', '0', '--http', 'uws']);
    try {
      assert.match(server.base, /^https:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
      assert.match(server.output(), /"url":"https:\/\/127\.0\.0\.1:\d+\/api\/v2","carrier":"uws"/);
      const health = await call(server.base, 'GET', '/health', pair.cert);
      assert.equal(health.status, 200, health.text);
    } finally {
      server.child.kill('SIGTERM');
      assert.equal(await exited(server.child), 0);
      await rm(home, { recursive: true, force: true });
    }
  });

  test('TROUPE_CERT_FILE and TROUPE_KEY_FILE on node win over config.yaml', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-tls-home-'));
    await writeFile(join(home, 'config.yaml'), `tls:\n  certFile: ${join(dir, 'absent-cert.pem')}\n  keyFile: ${join(dir, 'absent-key.pem')}\n`);
    const server = await startCli(['--home', home, '--port', '0', '--http', 'node'], { TROUPE_CERT_FILE: certFile, TROUPE_KEY_FILE: keyFile });
    try {
      assert.match(server.base, /^https:\/\//);
      const health = await call(server.base, 'GET', '/health', pair.cert);
      assert.equal(health.status, 200, health.text);
    } finally {
      server.child.kill('SIGTERM');
      assert.equal(await exited(server.child), 0);
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('a bad certificate or key stops the start with one line naming the file', () => {
  const files: Record<string, string> = {};
  before(async () => {
    const other = await selfSigned();
    const encrypted = await selfSigned('a passphrase');
    const write = async (name: string, text: string) => {
      files[name] = join(dir, name);
      await writeFile(files[name], text);
    };
    await write('garbage.pem', 'this is no certificate\n');
    await write('other-key.pem', other.key);
    await write('encrypted-key.pem', encrypted.key);
    await write('encrypted-cert.pem', encrypted.cert);
    files.folder = join(dir, 'a-folder.pem');
    await mkdir(files.folder);
  });

  const cases: { title: string; env: () => Record<string, string>; message: () => RegExp; http?: 'uws' | 'node' }[] = [
    {
      title: 'a missing certificate file',
      env: () => ({ TROUPE_CERT_FILE: join(dir, 'nowhere.pem'), TROUPE_KEY_FILE: keyFile }),
      message: () => new RegExp(`^troupe: cannot serve HTTPS: certificate file ${escape(join(dir, 'nowhere.pem'))} does not exist$`),
    },
    {
      title: 'a key file that cannot be read (a directory)',
      env: () => ({ TROUPE_CERT_FILE: certFile, TROUPE_KEY_FILE: files.folder }),
      message: () => new RegExp(`^troupe: cannot serve HTTPS: key file ${escape(files.folder)} is a directory$`),
    },
    {
      title: 'a certificate file that holds no certificate',
      env: () => ({ TROUPE_CERT_FILE: files['garbage.pem'], TROUPE_KEY_FILE: keyFile }),
      message: () => new RegExp(`^troupe: cannot serve HTTPS: certificate file ${escape(files['garbage.pem'])} holds no PEM certificate`),
    },
    {
      title: 'a key file that holds a certificate',
      env: () => ({ TROUPE_CERT_FILE: certFile, TROUPE_KEY_FILE: certFile }),
      message: () => new RegExp(`^troupe: cannot serve HTTPS: key file ${escape(certFile)} holds no PEM private key`),
    },
    {
      title: 'an encrypted key',
      env: () => ({ TROUPE_CERT_FILE: files['encrypted-cert.pem'], TROUPE_KEY_FILE: files['encrypted-key.pem'] }),
      message: () => new RegExp(`^troupe: cannot serve HTTPS: key file ${escape(files['encrypted-key.pem'])} holds an encrypted key`),
    },
    ...(['uws', 'node'] as const).map((http) => ({
      title: `a key of another certificate (--http ${http})`,
      http,
      env: () => ({ TROUPE_CERT_FILE: certFile, TROUPE_KEY_FILE: files['other-key.pem'] }),
      message: () => new RegExp(`^troupe: cannot serve HTTPS: the key in ${escape(files['other-key.pem'])} does not belong to the certificate in ${escape(certFile)}$`),
    })),
    {
      title: 'a certificate without its key',
      env: () => ({ TROUPE_CERT_FILE: certFile }),
      message: () => /^troupe: HTTPS needs both tls\.certFile \(TROUPE_CERT_FILE\) and tls\.keyFile \(TROUPE_KEY_FILE\); only certFile is set$/,
    },
  ];

  for (const { title, env, message, http } of cases) {
    test(`${title}: exit code 1, nothing opened`, async () => {
      const home = await mkdtemp(join(tmpdir(), 'troupe-tls-bad-'));
      try {
        const result = await runToExit(['--home', home, '--port', '0', '--http', http ?? 'uws'], env());
        assert.equal(result.code, 1, result.stderr + result.stdout);
        const lines = result.stderr.trim().split('\n');
        assert.equal(lines.length, 1, result.stderr);
        assert.match(lines[0], message());
        assert.doesNotMatch(result.stdout, /listening/);
        // Stopped before the home was opened: no data folder, so no lock.
        assert.deepEqual(await readdir(home), []);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    });
  }
});

describe('HTTPS through the embedding API', () => {
  test('createServer({ tls }) serves https; a bad pair rejects before the home is opened', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-tls-embed-'));
    try {
      await assert.rejects(createServer({ home, port: 0, tls: { certFile, keyFile: join(dir, 'nowhere.pem') } }), /cannot serve HTTPS: key file .*nowhere\.pem does not exist/);
      assert.deepEqual(await readdir(home), []);
      const troupe = await createServer({ home, port: 0, carrier: 'node', tls: { certFile, keyFile } });
      try {
        assert.equal(troupe.server.scheme, 'https');
        const health = await call(`https://127.0.0.1:${troupe.server.port}/api/v2`, 'GET', '/health', pair.cert);
        assert.equal(health.status, 200, health.text);
      } finally {
        await troupe.close();
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('a remote node served over HTTPS by troupe', () => {
  let remote: TestServer;
  let local: TestServer;
  before(async () => {
    remote = await startTestServer('uws', { tls: { certFile, keyFile } });
    await remote.writeDag('tls_remote_only', HELLO);
    const apiBaseURL = `https://127.0.0.1:${remote.troupe.server.port}/api/v2`;
    local = await startTestServer('node', {
      remoteNodes: [
        { name: 'tls-skipped', apiBaseURL, skipTLSVerify: true },
        { name: 'tls-verified', apiBaseURL, skipTLSVerify: false },
      ],
    });
  });
  after(() => Promise.all([local?.close(), remote?.close()]));

  test('skipTLSVerify: true reaches it through the self-signed certificate', async () => {
    const dag = await local.call('GET', '/dags/tls_remote_only?remoteNode=tls-skipped');
    assert.equal(dag.status, 200, dag.text);
    assert.equal(dag.body.dag.name, 'tls_remote_only');
    assert.equal((await local.call('GET', '/dags/tls_remote_only')).status, 404);
  });

  test('skipTLSVerify: false refuses the untrusted certificate with remote_node_error', async () => {
    const refused = await local.call('GET', '/dags/tls_remote_only?remoteNode=tls-verified');
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.code, 'remote_node_error');
    assert.match(refused.body.message, /remote node "tls-verified" cannot be reached \(.*SELF_SIGNED.*\); skipTLSVerify: true accepts/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

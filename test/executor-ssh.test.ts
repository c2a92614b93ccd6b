// Issue 17, item 2: the ssh executor (workflow-format 2.4, 5.2) against a real sshd on a loopback
// port (test/sshd.ts): key and password authentication, the standard keys, host key checking, the
// DAG-level ssh and a step's config replacing it whole, scripts, exit codes, both streams, the env,
// a stop that ends the remote command, and secrets kept out of logs and responses.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { PASSWORD_USER, ensurePasswordUser, keygen, sshdMissing, startSshd, type Sshd } from './sshd.ts';

const missing = sshdMissing();
// In CI a missing sshd fails the suite; elsewhere it may be skipped.
const skip = missing !== undefined && !process.env.CI ? missing : false;

const PASSWORD = 'pw-S3CRET-4f1a9c27';
const PASSWORD_ENV = 'SSH_TEST_PASSWORD_SECRET';

describe('the ssh executor', { skip }, () => {
  let sshd: Sshd;
  let server: TestServer;
  let home: string;
  const savedHome = process.env.HOME;

  before(async () => {
    if (missing) throw new Error(missing);
    sshd = await startSshd();
    ensurePasswordUser(PASSWORD);
    process.env[PASSWORD_ENV] = PASSWORD;
    // The server's user's home: the standard keys and known_hosts are looked up under it.
    home = await mkdtemp(join(tmpdir(), 'troupe-ssh-home-'));
    process.env.HOME = home;
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
    await sshd?.stop();
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    delete process.env[PASSWORD_ENV];
    if (home) await rm(home, { recursive: true, force: true });
  });

  const config = (fields: Record<string, string | number | boolean> = {}) => {
    const all = { user: 'root', host: '127.0.0.1', port: sshd.port, key: sshd.clientKey, knownHostFile: sshd.knownHosts, ...fields };
    return Object.entries(all).map(([key, value]) => `        ${key}: ${typeof value === 'string' ? JSON.stringify(value) : value}`);
  };
  const sshStep = (name: string, fields: Record<string, string | number | boolean> = {}) =>
    [`  - name: ${name}`, '    executor:', '      type: ssh', '      config:', ...config(fields)];
  const run = async (name: string, spec: string) => {
    const created = await server.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
    return server.startAndWait(name);
  };
  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const log = async (name: string, dagRunId: string, step: string, stream: 'stdout' | 'stderr' = 'stdout') =>
    (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=${stream}`)).body.content as string;
  const errors = (dagRun: any) => JSON.stringify(dagRun.nodes.map((n: any) => [n.step.name, n.statusLabel, n.error]));

  test('key authentication: the command runs on the remote host; stdout and stderr reach their logs; the output is captured', async () => {
    const spec = ['steps:', ...sshStep('remote'), '    command: echo "out $(id -un) $$" ; echo err >&2', '    output: REMOTE'].join('\n');
    const dagRun = await run('ssh_key', spec);
    assert.equal(dagRun.status, 4, errors(dagRun));
    const stdout = await log('ssh_key', dagRun.dagRunId, 'remote');
    assert.match(stdout, /^out root \d+\n?$/);
    assert.equal((await log('ssh_key', dagRun.dagRunId, 'remote', 'stderr')).trim(), 'err');
    assert.equal((await server.call('GET', `/dag-runs/ssh_key/${dagRun.dagRunId}/outputs`)).body.outputs.remote, stdout.trim());
  });
});

// the ssh executor (definition format: ssh settings) against a real sshd on a loopback
// port (test/sshd.ts): key and password authentication, the standard keys, host key checking, the
// DAG-level ssh and a step's config replacing it whole, scripts, exit codes, both streams, the env,
// a stop that ends the remote command, and secrets kept out of logs and responses.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer, stepError } from './helpers.ts';
import { PASSWORD_USER, ensurePasswordUser, keygen, sshdMissing, startSshd, type Sshd } from './sshd.ts';

const missing = sshdMissing();
// In CI a missing sshd fails the suite; elsewhere it may be skipped.
const skip = missing !== undefined && !process.env.CI ? missing : false;

const PASSWORD = 'pw-S3CRET-4f1a9c27';

/** A loopback port nothing listens on (it was free a moment ago). */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
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

  test('password authentication: a user with a password from a secret logs in; the password is in no log, output or response', async () => {
    const spec = [
      'secrets:',
      '  - name: SSH_PASS',
      '    provider: env',
      `    key: ${PASSWORD_ENV}`,
      'steps:',
      ...sshStep('login', { user: PASSWORD_USER, key: '', password: '${SSH_PASS}' }),
      // The secret reaches the remote command's environment, and what it prints of it is masked.
      '    command: id -un; echo "pass=$SSH_PASS"; echo "pass=$SSH_PASS" >&2',
      '    output: WHO',
    ].join('\n');
    const dagRun = await run('ssh_password', spec);
    assert.equal(dagRun.status, 4, errors(dagRun));
    const stdout = await log('ssh_password', dagRun.dagRunId, 'login');
    assert.equal(stdout, `${PASSWORD_USER}\npass=*******`);
    assert.equal((await log('ssh_password', dagRun.dagRunId, 'login', 'stderr')), 'pass=*******');
    const texts = [
      stdout,
      await log('ssh_password', dagRun.dagRunId, 'login', 'stderr'),
      (await server.call('GET', `/dag-runs/ssh_password/${dagRun.dagRunId}`)).text,
      (await server.call('GET', `/dag-runs/ssh_password/${dagRun.dagRunId}/outputs`)).text,
      (await server.call('GET', '/dags/ssh_password')).text,
    ];
    for (const text of texts) assert.ok(!text.includes(PASSWORD), text);
  });

  test('a wrong password fails the step with the library\'s message, the password in neither the error nor the log', async () => {
    const wrong = `${PASSWORD}-wrong`;
    const spec = ['steps:', ...sshStep('login', { user: PASSWORD_USER, key: '', password: wrong }), '    command: id -un'].join('\n');
    const dagRun = await run('ssh_bad_password', spec);
    assert.equal(dagRun.status, 2);
    const error = node(dagRun, 'login').error as string;
    assert.match(error, /All configured authentication methods failed/);
    assert.match(error, new RegExp(`${PASSWORD_USER}@127\\.0\\.0\\.1:${sshd.port}`));
    const stderr = await log('ssh_bad_password', dagRun.dagRunId, 'login', 'stderr');
    assert.match(stderr, /All configured authentication methods failed/);
    for (const text of [error, stderr, (await server.call('GET', `/dag-runs/ssh_bad_password/${dagRun.dagRunId}`)).text]) assert.ok(!text.includes(wrong));
  });

  test('without a key, the standard keys of ~/.ssh are tried in order (RSA first, Ed25519 later) and ~/.ssh/known_hosts is the default', async () => {
    const dotSsh = join(home, '.ssh');
    await mkdir(dotSsh, { recursive: true });
    try {
      // An RSA key sshd does not accept is tried first and refused; the Ed25519 key logs in.
      keygen(join(dotSsh, 'id_rsa'), 'rsa');
      await copyFile(sshd.clientKey, join(dotSsh, 'id_ed25519'));
      await copyFile(sshd.knownHosts, join(dotSsh, 'known_hosts'));
      const spec = ['steps:', '  - name: defaults', '    executor:', '      type: ssh', '      config:', '        host: 127.0.0.1', `        port: ${sshd.port}`, '    command: id -un'].join('\n');
      const dagRun = await run('ssh_default_keys', spec);
      assert.equal(dagRun.status, 4, errors(dagRun));
      assert.equal(await log('ssh_default_keys', dagRun.dagRunId, 'defaults'), 'root');
    } finally {
      await rm(dotSsh, { recursive: true, force: true });
    }
  });

  test('with no key to use and no password, the step fails naming the standard keys it looked for', async () => {
    const spec = ['steps:', ...sshStep('nokey', { key: '' }), '    command: id -un'].join('\n');
    const dagRun = await run('ssh_no_key', spec);
    assert.equal(dagRun.status, 2);
    assert.match(node(dagRun, 'nokey').error, /no key and no password to log in with: none of .*id_rsa, .*id_ecdsa, .*id_ed25519, .*id_dsa could be used/);
  });

  test('strictHostKey (on by default) checks known_hosts: a hashed entry is known; an unknown host, a changed key or a missing file fail the step; strictHostKey false connects', async () => {
    const hashed = join(sshd.dir, 'known_hosts_hashed');
    await copyFile(sshd.knownHosts, hashed);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', hashed], { stdio: 'ignore' });
    const otherKey = join(sshd.dir, 'other_host_key');
    keygen(otherKey);
    const otherLine = execFileSync('ssh-keygen', ['-y', '-f', otherKey], { encoding: 'utf8' }).trim();
    const changed = join(sshd.dir, 'known_hosts_changed');
    await writeFile(changed, `# another key for this host\n[127.0.0.1]:${sshd.port} ${otherLine}\n`);
    const unknown = join(sshd.dir, 'known_hosts_unknown');
    await writeFile(unknown, `[127.0.0.1]:1 ${sshd.hostKey}\nexample.com ${sshd.hostKey}\n`);
    const spec = [
      'type: graph',
      'steps:',
      ...sshStep('hashed', { knownHostFile: hashed }), '    command: echo hashed',
      ...sshStep('unknown', { knownHostFile: unknown }), '    command: echo unknown',
      ...sshStep('changed', { knownHostFile: changed }), '    command: echo changed',
      ...sshStep('nofile', { knownHostFile: join(sshd.dir, 'no_such_file') }), '    command: echo nofile',
      ...sshStep('lax', { knownHostFile: changed, strictHostKey: false }), '    command: echo lax',
    ].join('\n');
    const dagRun = await run('ssh_host_keys', spec);
    const label = (step: string) => node(dagRun, step).statusLabel;
    assert.deepEqual(['hashed', 'unknown', 'changed', 'nofile', 'lax'].map(label), ['succeeded', 'failed', 'failed', 'failed', 'succeeded'], errors(dagRun));
    assert.equal(await log('ssh_host_keys', dagRun.dagRunId, 'hashed'), 'hashed');
    assert.equal(await log('ssh_host_keys', dagRun.dagRunId, 'lax'), 'lax');
    assert.match(node(dagRun, 'unknown').error, new RegExp(`host key verification failed: the ssh-ed25519 key of \\[127\\.0\\.0\\.1\\]:${sshd.port} \\(SHA256:[^)]+\\) is not in ${unknown}`));
    assert.match(node(dagRun, 'changed').error, /host key verification failed: .* does not match the key listed for it in .*known_hosts_changed \(line 2\)/);
    assert.match(await log('ssh_host_keys', dagRun.dagRunId, 'changed', 'stderr'), /does not match/);
    assert.match(node(dagRun, 'nofile').error, /strictHostKey is on and the known hosts file cannot be read: ENOENT/);
  });

  test('a DAG-level ssh runs the plain command and script steps and executor: ssh steps without config on its host', async () => {
    const spec = [
      'ssh:',
      '  user: root',
      '  host: 127.0.0.1',
      `  port: "${sshd.port}"`,
      `  key: ${sshd.clientKey}`,
      `  knownHostFile: ${sshd.knownHosts}`,
      'steps:',
      '  - name: plain',
      '    command: echo "plain $(id -un) $SSH_CONNECTION"',
      '  - name: typed',
      '    executor: ssh',
      '    command: echo typed',
      '  - name: script',
      '    script: |',
      '      for word in script on; do printf "%s " "$word"; done',
      '      printenv SSH_CONNECTION | cut -d" " -f4',
    ].join('\n');
    const dagRun = await run('ssh_dag_level', spec);
    assert.equal(dagRun.status, 4, errors(dagRun));
    // SSH_CONNECTION is set by sshd: the command ran in an ssh session.
    assert.match(await log('ssh_dag_level', dagRun.dagRunId, 'plain'), new RegExp(`^plain root 127\\.0\\.0\\.1 \\d+ 127\\.0\\.0\\.1 ${sshd.port}$`));
    assert.equal(await log('ssh_dag_level', dagRun.dagRunId, 'typed'), 'typed');
    assert.equal(await log('ssh_dag_level', dagRun.dagRunId, 'script'), `script on ${sshd.port}`);
  });

  test('a step\'s ssh config replaces the DAG-level one whole: its user and port win, and the DAG\'s key and strictHostKey do not leak into it', async () => {
    const closedPort = await unusedPort();
    const wrongKnownHosts = join(sshd.dir, 'known_hosts_wrong_for_replace');
    keygen(join(sshd.dir, 'replace_other_key'));
    await writeFile(wrongKnownHosts, `[127.0.0.1]:${sshd.port} ${execFileSync('ssh-keygen', ['-y', '-f', join(sshd.dir, 'replace_other_key')], { encoding: 'utf8' }).trim()}\n`);
    const spec = [
      'type: graph',
      'ssh:',
      '  user: root',
      '  host: 127.0.0.1',
      // Nothing listens there: a step that borrowed the DAG's port would fail to connect.
      `  port: "${closedPort}"`,
      `  key: ${sshd.clientKey}`,
      '  strictHostKey: false',
      'secrets:',
      '  - name: SSH_PASS',
      '    provider: env',
      `    key: ${PASSWORD_ENV}`,
      'steps:',
      '  - name: inherits',
      '    command: id -un',
      '  - name: own',
      '    executor:',
      '      type: ssh',
      '      config:',
      `        user: ${PASSWORD_USER}`,
      '        host: 127.0.0.1',
      `        port: ${sshd.port}`,
      '        password: ${SSH_PASS}',
      `        knownHostFile: ${sshd.knownHosts}`,
      '    command: id -un',
      // No key of its own: the DAG's is not used, and there is no other way in.
      '  - name: nokey',
      '    executor:',
      '      type: ssh',
      '      config:',
      '        host: 127.0.0.1',
      `        port: ${sshd.port}`,
      `        knownHostFile: ${sshd.knownHosts}`,
      '    command: id -un',
      // strictHostKey is on again (its default), not the DAG's false.
      '  - name: strict',
      '    executor:',
      '      type: ssh',
      '      config:',
      '        host: 127.0.0.1',
      `        port: ${sshd.port}`,
      `        key: ${sshd.clientKey}`,
      `        knownHostFile: ${wrongKnownHosts}`,
      '    command: id -un',
    ].join('\n');
    const dagRun = await run('ssh_replace', spec);
    const label = (step: string) => node(dagRun, step).statusLabel;
    assert.deepEqual(['inherits', 'own', 'nokey', 'strict'].map(label), ['failed', 'succeeded', 'failed', 'failed'], errors(dagRun));
    assert.match(node(dagRun, 'inherits').error, new RegExp(`ssh root@127\\.0\\.0\\.1:${closedPort}: connect ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}`));
    assert.equal(await log('ssh_replace', dagRun.dagRunId, 'own'), PASSWORD_USER);
    assert.match(node(dagRun, 'nokey').error, /no key and no password to log in with/);
    assert.match(node(dagRun, 'strict').error, /host key verification failed: .* does not match/);
  });

  test('a multi-line script runs on the remote shell, reading /dev/null as input; a shebang picks its interpreter; command with script names the interpreter', async () => {
    const spec = [
      'type: graph',
      'steps:',
      ...sshStep('script'),
      '    script: |',
      '      total=0',
      '      for n in 1 2 3; do',
      '        total=$((total + n))',
      '      done',
      '      cat',
      '      echo "total=$total"',
      "      echo 'quote '\"'\"' kept'",
      ...sshStep('bash'),
      '    script: |',
      '      #!/bin/bash',
      '      words=(alpha beta)',
      '      [[ ${#words[@]} -eq 2 ]] && echo "bash ${words[1]}"',
      ...sshStep('interpreter'),
      '    command: bash',
      '    script: |',
      '      echo "interpreter $BASH_VERSION" | cut -c1-13',
    ].join('\n');
    const dagRun = await run('ssh_script', spec);
    assert.equal(dagRun.status, 4, errors(dagRun));
    assert.equal(await log('ssh_script', dagRun.dagRunId, 'script'), "total=6\nquote ' kept");
    assert.equal(await log('ssh_script', dagRun.dagRunId, 'bash'), 'bash beta');
    assert.equal(await log('ssh_script', dagRun.dagRunId, 'interpreter'), 'interpreter 5');
  });

  test('exit codes: the remote command\'s code fails the node and reaches ${id.exitCode}; a remote signal maps to 128 + its number, as for a local step', async () => {
    const spec = [
      'type: graph',
      'steps:',
      ...sshStep('seven'), '    id: seven', '    command: echo going >&2; exit 7', '    continueOn:', '      failure: true',
      ...sshStep('killed'), '    id: killed', '    command: kill -TERM $$', '    continueOn:', '      failure: true',
      '  - name: report',
      '    depends: [seven, killed]',
      '    command: echo "seven=${seven.exitCode} killed=${killed.exitCode}"',
    ].join('\n');
    const dagRun = await run('ssh_exit_codes', spec);
    assert.equal(node(dagRun, 'seven').statusLabel, 'failed');
    assert.equal(node(dagRun, 'seven').error, 'failed to execute step "seven": exit status 7');
    assert.equal(await log('ssh_exit_codes', dagRun.dagRunId, 'seven', 'stderr'), 'going');
    assert.equal(node(dagRun, 'killed').statusLabel, 'failed');
    assert.equal(node(dagRun, 'killed').error, 'failed to execute step "killed": signal: SIGTERM');
    assert.equal(await log('ssh_exit_codes', dagRun.dagRunId, 'report'), 'seven=7 killed=143');
  });

  test('the step\'s env (DAG env, params, step env, outputs) is exported on the remote host as a local step sees it; the server\'s own HOME is not', async () => {
    // printenv reads the environment itself: a $NAME in the command is expanded before it is sent.
    const printEnv = '    command: printenv GREETING NAME QUOTED EARLIER DAG_NAME; printenv HOME >&2';
    const spec = [
      'env:',
      '  - GREETING: hello',
      'params:',
      '  - NAME: remote world',
      'steps:',
      '  - name: first',
      '    command: echo "from before"',
      '    output: EARLIER',
      '  - name: local',
      '    env:',
      "      - QUOTED: it's a 'quoted' \"value\" with $ and \\ in it",
      printEnv,
      ...sshStep('remote'),
      '    env:',
      "      - QUOTED: it's a 'quoted' \"value\" with $ and \\ in it",
      printEnv,
    ].join('\n');
    const dagRun = await run('ssh_env', spec);
    assert.equal(dagRun.status, 4, errors(dagRun));
    const local = await log('ssh_env', dagRun.dagRunId, 'local');
    const remote = await log('ssh_env', dagRun.dagRunId, 'remote');
    assert.equal(remote, local);
    assert.match(remote, /^hello\nremote world\nit's a 'quoted' "value" with \$ and \\ in it\nfrom before\nssh_env$/);
    // The server's HOME (a temp dir here) is this machine's: the remote user has their own.
    assert.equal(await log('ssh_env', dagRun.dagRunId, 'local', 'stderr'), home);
    assert.equal(await log('ssh_env', dagRun.dagRunId, 'remote', 'stderr'), '/root');
  });

  test('a stop ends the remote command: the sshd session\'s processes are gone from the process table, the node is aborted', async () => {
    const marker = 3000 + Math.floor(Math.random() * 900);
    const spec = ['steps:', ...sshStep('long'), `    command: sleep ${marker}.5; echo never`].join('\n');
    assert.equal((await server.call('POST', '/dags', { name: 'ssh_stop', spec })).status, 201);
    const { body } = await server.call('POST', '/dags/ssh_stop/start', {});
    const remote = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(`sleep ${marker}.5`));
    assert.ok(await waitUntil(() => remote().length > 0), 'the remote sleep started');
    assert.equal((await server.call('POST', `/dag-runs/ssh_stop/${body.dagRunId}/stop`)).status, 200);
    const stopped = await server.waitForRun('ssh_stop', body.dagRunId);
    assert.deepEqual([stopped.statusLabel, stopped.nodes[0].statusLabel], ['aborted', 'aborted']);
    assert.ok(await waitUntil(() => remote().length === 0), `still running: ${remote().join('; ')}`);
    assert.equal(await log('ssh_stop', body.dagRunId, 'long'), '');
    assert.equal(stopped.nodes[0].error, 'signal: SIGTERM');
  });

  test('signalOnStop reaches the remote command; one that ignores it gets SIGKILL after maxCleanUpTimeSec', async () => {
    const marker = 3000 + Math.floor(Math.random() * 900);
    const spec = [
      'type: graph',
      'maxCleanUpTimeSec: 1',
      'maxActiveSteps: 2',
      'steps:',
      ...sshStep('interrupted'), '    signalOnStop: SIGINT', `    command: sleep ${marker}.25`,
      ...sshStep('stubborn'), `    command: trap '' TERM; sleep ${marker}.75`,
    ].join('\n');
    assert.equal((await server.call('POST', '/dags', { name: 'ssh_stop_signals', spec })).status, 201);
    const { body } = await server.call('POST', '/dags/ssh_stop_signals/start', {});
    const remote = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(`sleep ${marker}.`));
    assert.ok(await waitUntil(() => remote().length === 2), 'both remote sleeps started');
    assert.equal((await server.call('POST', `/dag-runs/ssh_stop_signals/${body.dagRunId}/stop`)).status, 200);
    const stopped = await server.waitForRun('ssh_stop_signals', body.dagRunId);
    assert.equal(stopped.statusLabel, 'aborted');
    assert.equal(node(stopped, 'interrupted').error, 'signal: SIGINT');
    assert.equal(node(stopped, 'stubborn').error, 'signal: SIGKILL');
    assert.ok(await waitUntil(() => remote().length === 0), `still running: ${remote().join('; ')}`);
  });

  test('a host that accepts the connection and never answers fails the step within the handshake timeout, with the library\'s message', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const spec = ['steps:', ...sshStep('silent', { port }), '    command: echo never'].join('\n');
      assert.equal((await server.call('POST', '/dags', { name: 'ssh_silent', spec })).status, 201);
      const { body } = await server.call('POST', '/dags/ssh_silent/start', {});
      let dagRun: any;
      // ssh2's readyTimeout (20 s) bounds the wait: longer than the helper's own deadline.
      for (let polls = 0; polls < 300; polls++) {
        dagRun = (await server.call('GET', `/dag-runs/ssh_silent/${body.dagRunId}`)).body.dagRun;
        if (![0, 1, 5].includes(dagRun.status)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(dagRun.statusLabel, 'failed');
      assert.equal(node(dagRun, 'silent').error, stepError('silent', `ssh root@127.0.0.1:${port}: Timed out while waiting for handshake`));
      assert.match(await log('ssh_silent', body.dagRunId, 'silent', 'stderr'), /Timed out while waiting for handshake/);
    } finally {
      silent.close();
    }
  });
});

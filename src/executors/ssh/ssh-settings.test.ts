import { test } from 'node:test';
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sshSettings } from './ssh-settings.ts';

const DAG = { user: 'deploy', host: 'dag.example.com', port: '2200', key: '/keys/dag', password: 'dag-pw', strictHostKey: false, knownHostFile: '/kh/dag' };

test('an empty step config takes the DAG-level settings', () => {
  assert.deepEqual(sshSettings({}, DAG, '/work'), {
    kind: 'ok',
    settings: { user: 'deploy', host: 'dag.example.com', port: 2200, key: '/keys/dag', password: 'dag-pw', strictHostKey: false, knownHostFile: '/kh/dag' },
  });
});

test('a step config replaces the DAG-level settings whole, with 2.4\'s defaults for what it leaves out', () => {
  const outcome = sshSettings({ host: 'step.example.com', user: 'ops' }, DAG, '/work');
  assert.deepEqual(outcome, {
    kind: 'ok',
    settings: { user: 'ops', host: 'step.example.com', port: 22, strictHostKey: true, knownHostFile: join(homedir(), '.ssh', 'known_hosts') },
  });
});

test('paths: ~/ is the home directory, a relative path resolves against the working directory; a numeric port and a string strictHostKey are read', () => {
  const outcome = sshSettings({ host: 'h', port: 2222, key: '~/.ssh/deploy', knownHostFile: 'hosts/known', strictHostKey: 'false' }, undefined, '/work/dags');
  assert.equal(outcome.kind, 'ok');
  if (outcome.kind !== 'ok') return;
  assert.equal(outcome.settings.key, join(homedir(), '.ssh', 'deploy'));
  assert.equal(outcome.settings.knownHostFile, '/work/dags/hosts/known');
  assert.equal(outcome.settings.port, 2222);
  assert.equal(outcome.settings.strictHostKey, false);
});

test('no settings, no host or a bad port are errors naming the problem', () => {
  assert.deepEqual(sshSettings({}, undefined, '/'), { kind: 'invalid', message: 'ssh: no ssh settings: set the step\'s executor config or the DAG\'s ssh' });
  assert.deepEqual(sshSettings({ user: 'x' }, DAG, '/'), { kind: 'invalid', message: 'ssh: no host: the ssh settings need one' });
  assert.deepEqual(sshSettings({ host: 'h', port: '70000' }, undefined, '/'), { kind: 'invalid', message: 'ssh: port "70000" is not a port number' });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerSpec } from '../../core/index.ts';
import { KEEPALIVE, containerEnv, dagCreateOptions, parsePort, stepCommands, stepCreateOptions } from './create-options.ts';

const spec = (fields: Partial<ContainerSpec> = {}): ContainerSpec => ({
  image: 'busybox', pullPolicy: 'missing', env: [], volumes: [], ports: [], startup: 'keepalive', command: [],
  waitFor: 'running', restartPolicy: 'no', keepContainer: false, ...fields,
});

describe('container create options', () => {
  it('passes the run\'s variables without the host\'s own, the config\'s env over them', () => {
    assert.deepEqual(containerEnv({ PATH: '/usr/bin', HOME: '/root', A: '1', B: '2' }, ['B=config', 'C=3']), ['A=1', 'B=config', 'C=3']);
  });

  it('runs a command or a script through the step\'s shell, each of several commands on its own', () => {
    assert.deepEqual(stepCommands({ command: 'echo hi' }), { kind: 'argv', argvs: [['sh', '-c', 'echo hi']] });
    assert.deepEqual(stepCommands({ command: 'echo hi', shell: ['bash', '-e'] }), { kind: 'argv', argvs: [['bash', '-e', '-c', 'echo hi']] });
    assert.deepEqual(stepCommands({ script: 'echo a\necho b' }), { kind: 'argv', argvs: [['sh', '-c', 'echo a\necho b']] });
    assert.deepEqual(stepCommands({ commands: ['a', 'b'] }), { kind: 'argv', argvs: [['sh', '-c', 'a'], ['sh', '-c', 'b']] });
    assert.deepEqual(stepCommands({}), { kind: 'imageDefault' });
    assert.equal(stepCommands({ command: 'python3', script: 'print(1)' }).kind, 'invalid');
  });

  it('reads ports as Docker\'s CLI does', () => {
    assert.deepEqual(parsePort('80'), { containerPort: '80/tcp' });
    assert.deepEqual(parsePort('8080:80'), { containerPort: '80/tcp', hostPort: '8080' });
    assert.deepEqual(parsePort('127.0.0.1:8080:80/udp'), { containerPort: '80/udp', hostIp: '127.0.0.1', hostPort: '8080' });
    assert.equal(parsePort('eighty'), undefined);
  });

  it('maps the step config: env, workingDir, binds, port bindings, networks, labels, init', () => {
    const options = stepCreateOptions({
      image: 'busybox',
      container: { workingDir: '/w', exposedPorts: { '80/tcp': {} } },
      host: { binds: ['/a:/b'], portBindings: { '80/tcp': [{ hostIP: '127.0.0.1', hostPort: '8080' }] } },
      network: { EndpointsConfig: { backend: { Aliases: ['svc'] } } },
    }, ['sh', '-c', 'x'], ['A=1'], 'named');
    assert.equal(options.name, 'named');
    assert.deepEqual(options.Cmd, ['sh', '-c', 'x']);
    assert.equal(options.WorkingDir, '/w');
    assert.deepEqual(options.HostConfig?.PortBindings, { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }] });
    assert.equal(options.HostConfig?.NetworkMode, 'backend');
    assert.deepEqual(options.NetworkingConfig?.EndpointsConfig, { backend: { Aliases: ['svc'] } });
    assert.equal(options.HostConfig?.Init, true);
    assert.equal(options.Labels?.['org.troupe.managed'], 'true');
    assert.equal(stepCreateOptions({ image: 'busybox' }, undefined, []).Cmd, undefined, 'no command: the image\'s');
  });

  it('starts a DAG-level container as its startup says', () => {
    const keepalive = dagCreateOptions(spec(), 'c', []);
    assert.ok('options' in keepalive);
    assert.deepEqual([keepalive.options.Entrypoint, keepalive.options.Cmd].flat(), KEEPALIVE);
    const entrypoint = dagCreateOptions(spec({ startup: 'entrypoint' }), 'c', []);
    assert.ok('options' in entrypoint && entrypoint.options.Entrypoint === undefined && entrypoint.options.Cmd === undefined);
    const command = dagCreateOptions(spec({ startup: 'command', command: ['serve', '--port', '80'] }), 'c', []);
    assert.ok('options' in command && command.options.Entrypoint === undefined);
    assert.deepEqual('options' in command && command.options.Cmd, ['serve', '--port', '80']);
    assert.deepEqual(dagCreateOptions(spec({ startup: 'command' }), 'c', []), { error: 'startup "command" needs a command' });
  });

  it('maps the DAG-level fields: user, ports, volumes, network, restart policy', () => {
    const made = dagCreateOptions(spec({ user: '1000', ports: ['8080:80'], volumes: ['/data:/data:ro'], network: 'backend', restartPolicy: 'unless-stopped' }), 'c', ['A=1']);
    assert.ok('options' in made);
    const { options } = made;
    assert.equal(options.User, '1000');
    assert.deepEqual(options.ExposedPorts, { '80/tcp': {} });
    assert.deepEqual(options.HostConfig?.PortBindings, { '80/tcp': [{ HostPort: '8080' }] });
    assert.deepEqual(options.HostConfig?.Binds, ['/data:/data:ro']);
    assert.equal(options.HostConfig?.NetworkMode, 'backend');
    assert.deepEqual(options.NetworkingConfig?.EndpointsConfig, { backend: {} });
    assert.deepEqual(options.HostConfig?.RestartPolicy, { Name: 'unless-stopped' });
    const none = dagCreateOptions(spec({ network: 'none' }), 'c', []);
    assert.ok('options' in none && none.options.NetworkingConfig === undefined && none.options.HostConfig?.NetworkMode === 'none');
    assert.match(JSON.stringify(dagCreateOptions(spec({ ports: ['x:y'] }), 'c', [])), /not a port/);
  });
});

// Pure translation of the definition into Docker API bodies: the step-level config and the
// DAG-level container into container create options, a step into the argv it runs.
import type Docker from 'dockerode';
import type { ContainerSpec, StepTask } from '../../core/index.ts';
import { MANAGED_LABEL } from './docker.ts';

/** The step-level config of `executor: docker` (definition format: container executor), as the definition wrote it. */
export interface StepContainerConfig {
  image?: string;
  containerName?: string;
  pull?: 'always' | 'missing' | 'never';
  platform?: string;
  autoRemove?: boolean;
  container?: { env?: string[]; workingDir?: string; exposedPorts?: Record<string, unknown> };
  host?: { binds?: string[]; portBindings?: Record<string, Array<Record<string, unknown>>> };
  network?: { EndpointsConfig?: Record<string, { Aliases?: string[] } | null> };
  exec?: { user?: string; workingDir?: string; env?: string[] };
}

/** Variables of the server's machine that would mislead a program in a container: its image sets its own. */
const HOST_ONLY = new Set(['PATH', 'HOME', 'SHELL', 'PWD', 'OLDPWD', 'TMPDIR']);

/**
 * A step's variables as NAME=value for a container: the run's (DAG env, params, secrets whose
 * references the shell expands there) without the host's own, then `extra` (the config's env) over them.
 */
export function containerEnv(taskEnv: Record<string, string>, extra: readonly string[] = []): string[] {
  const merged = new Map<string, string>();
  for (const [name, value] of Object.entries(taskEnv)) if (!HOST_ONLY.has(name)) merged.set(name, `${name}=${value}`);
  for (const item of extra) {
    const cut = item.indexOf('=');
    merged.set(cut < 0 ? item : item.slice(0, cut), item);
  }
  return [...merged.values()];
}

export type StepCommands =
  | { kind: 'argv'; argvs: string[][] }
  /** No command: a new container runs its image's entrypoint and command. */
  | { kind: 'imageDefault' }
  | { kind: 'invalid'; message: string };

/**
 * What a step runs in the container: its command (or each of its commands) or its script, through
 * the step's shell (sh by default), as the shell executor runs them on the host.
 */
export function stepCommands(task: Pick<StepTask, 'command' | 'commands' | 'script' | 'shell'>): StepCommands {
  const shell = task.shell ?? ['sh'];
  if (task.script !== undefined) {
    if (task.command !== undefined) return { kind: 'invalid', message: 'a container step runs a command or a script, not both' };
    return { kind: 'argv', argvs: [[...shell, '-c', task.script]] };
  }
  if (task.commands !== undefined) return { kind: 'argv', argvs: task.commands.map((command) => [...shell, '-c', command]) };
  if (task.command !== undefined && task.command.trim() !== '') return { kind: 'argv', argvs: [[...shell, '-c', task.command]] };
  return { kind: 'imageDefault' };
}

/** `{hostIP, hostPort}` as written in Dagu's definitions, in the API's spelling. */
function portBinding(binding: Record<string, unknown>): { HostIp?: string; HostPort?: string } {
  const hostIp = binding.hostIP ?? binding.HostIp ?? binding.hostIp ?? binding.HostIP;
  const hostPort = binding.hostPort ?? binding.HostPort;
  return {
    ...(hostIp !== undefined ? { HostIp: String(hostIp) } : {}),
    ...(hostPort !== undefined ? { HostPort: String(hostPort) } : {}),
  };
}

/** A new container for a step: the config's container, host and network parts. */
export function stepCreateOptions(config: StepContainerConfig, argv: string[] | undefined, env: string[], name?: string): Docker.ContainerCreateOptions {
  const networks = config.network?.EndpointsConfig;
  const firstNetwork = networks ? Object.keys(networks)[0] : undefined;
  const portBindings = config.host?.portBindings
    ? Object.fromEntries(Object.entries(config.host.portBindings).map(([port, list]) => [port, list.map(portBinding)]))
    : undefined;
  return {
    ...(name !== undefined ? { name } : {}),
    Image: config.image,
    ...(argv ? { Cmd: argv } : {}),
    Env: env,
    ...(config.container?.workingDir ? { WorkingDir: config.container.workingDir } : {}),
    ...(config.container?.exposedPorts ? { ExposedPorts: config.container.exposedPorts as Record<string, object> } : {}),
    Labels: { [MANAGED_LABEL]: 'true' },
    HostConfig: {
      // An init process forwards the stop signal: a command running as PID 1 would ignore SIGTERM.
      Init: true,
      ...(config.host?.binds ? { Binds: config.host.binds } : {}),
      ...(portBindings ? { PortBindings: portBindings } : {}),
      ...(firstNetwork !== undefined ? { NetworkMode: firstNetwork } : {}),
    },
    ...(networks ? { NetworkingConfig: { EndpointsConfig: Object.fromEntries(Object.entries(networks).map(([key, value]) => [key, value ?? {}])) } } : {}),
  };
}

/** Keeps a DAG-level container alive between the steps that exec into it (startup: keepalive). */
export const KEEPALIVE = ['sh', '-c', 'while :; do sleep 86400; done'];

const STANDARD_NETWORKS = new Set(['none', 'host', 'bridge', 'default']);

/**
 * `ports` items as Docker's CLI reads them: `80`, `8080:80`, `127.0.0.1:8080:80`, each with an
 * optional `/tcp` or `/udp`. Returns undefined for an item of another form.
 */
export function parsePort(item: string): { containerPort: string; hostIp?: string; hostPort?: string } | undefined {
  const match = /^(?:(?:([0-9.]+|\[[0-9a-f:]+\]):)?([0-9]*):)?([0-9]+)(\/(?:tcp|udp|sctp))?$/i.exec(item.trim());
  if (!match) return undefined;
  const [, hostIp, hostPort, port, protocol] = match;
  return { containerPort: `${port}${(protocol ?? '/tcp').toLowerCase()}`, ...(hostIp ? { hostIp: hostIp.replace(/^\[|\]$/g, '') } : {}), ...(hostPort ? { hostPort } : {}) };
}

/** The DAG-level container: started once per run, each step an exec in it. */
export function dagCreateOptions(spec: ContainerSpec, name: string, env: string[]): { options: Docker.ContainerCreateOptions } | { error: string } {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, Array<{ HostIp?: string; HostPort?: string }>> = {};
  for (const item of spec.ports) {
    const port = parsePort(item);
    if (!port) return { error: `ports: "${item}" is not a port (80, 8080:80 or 127.0.0.1:8080:80, with /tcp or /udp)` };
    exposed[port.containerPort] = {};
    if (port.hostPort !== undefined || port.hostIp !== undefined) {
      (bindings[port.containerPort] ??= []).push({ ...(port.hostIp ? { HostIp: port.hostIp } : {}), HostPort: port.hostPort ?? '' });
    }
  }
  if (spec.startup === 'command' && spec.command.length === 0) return { error: 'startup "command" needs a command' };
  const startup: Partial<Docker.ContainerCreateOptions> =
    spec.startup === 'keepalive' ? { Entrypoint: KEEPALIVE.slice(0, 2), Cmd: KEEPALIVE.slice(2) }
      : spec.startup === 'command' ? { Cmd: spec.command }
        : {};
  const network = spec.network;
  const options: Docker.ContainerCreateOptions = {
    name,
    Image: spec.image,
    ...startup,
    Env: env,
    ...(spec.workingDir ? { WorkingDir: spec.workingDir } : {}),
    ...(spec.user ? { User: spec.user } : {}),
    ...(Object.keys(exposed).length > 0 ? { ExposedPorts: exposed } : {}),
    Labels: { [MANAGED_LABEL]: 'true' },
    HostConfig: {
      Init: true,
      ...(spec.volumes.length > 0 ? { Binds: spec.volumes } : {}),
      ...(Object.keys(bindings).length > 0 ? { PortBindings: bindings } : {}),
      ...(network ? { NetworkMode: network } : {}),
      ...(spec.restartPolicy !== 'no' ? { RestartPolicy: { Name: spec.restartPolicy } } : {}),
    },
    ...(network && !STANDARD_NETWORKS.has(network) && !network.startsWith('container:') ? { NetworkingConfig: { EndpointsConfig: { [network]: {} } } } : {}),
  };
  return { options };
}

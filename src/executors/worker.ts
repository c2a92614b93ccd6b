// Piscina worker entry: runs one step task with the executor its type names. Never throws:
// results cross the thread boundary as data. With the posix_spawn addon this thread starts shell
// steps itself (the cost does not depend on the server's size) and names their process groups to
// its step host, which stops them if the server crashes; without it, shell steps are relayed to the
// host, which forks them from a small process (see step-host.ts).
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';
import type { StepResult } from '../core/index.ts';
import { setWorkerLogDescriptor } from '../logging/worker-log.ts';
import { HostClient } from './host-client.ts';
import type { ExecutorFn, SpawnMode, WorkerTask } from './protocol.ts';
import { runShell } from './shell/shell.executor.ts';
import { spawnMethod } from './shell/spawner.ts';

const data = workerData as { spawnMode?: SpawnMode; stepRegistryDir?: string; logDescriptor?: 1 | 2; logText?: boolean; prepareHost?: boolean } | undefined;
if (data?.logDescriptor) setWorkerLogDescriptor(data.logDescriptor, data.logText === true);
const mode: SpawnMode = data?.spawnMode ?? spawnMethod;
const host = new HostClient(mode === 'child_process', data?.stepRegistryDir);
// The host's start (a process of its own) overlaps what precedes the first step, instead of following it.
if (data?.prepareHost) host.forked();

const relayToHost: ExecutorFn = ({ port, ...task }) => host.run(task, port);
// A step starts once its host is forked, not once the host has loaded: the watch list is the host's
// descriptor from the fork on, and a host that finds the server gone when it has loaded (its channel
// closed already) stops every group listed there (step-host.ts). Waiting for the host's `ready`
// would put a Node process's start-up before every first step of a thread.
const runHere: ExecutorFn = async (task) => {
  host.forked();
  return runShell({ ...task, onSpawn: (pid) => host.watch(pid, task), onExit: (pid) => host.unwatch(pid) });
};
const shell = mode === 'posix_spawn' ? runHere : relayToHost;

// The other executors' modules, and the libraries they hold (tar, yauzl, yazl, dockerode, ssh2,
// nodemailer, undici, jq-wasm), load with a thread's first step of their type: a thread that only
// runs shell steps never holds them (each thread would otherwise carry them all from its start).
const loaders: Record<string, () => Promise<ExecutorFn>> = {
  jq: async () => (await load<typeof import('./jq/jq.executor.ts')>('./jq/jq.executor')).runJq,
  mail: async () => (await load<typeof import('./mail/mail.executor.ts')>('./mail/mail.executor')).runMail,
  ssh: async () => (await load<typeof import('./ssh/ssh.executor.ts')>('./ssh/ssh.executor')).runSsh,
  http: async () => (await load<typeof import('./http/http.executor.ts')>('./http/http.executor')).runHttp,
  archive: async () => (await load<typeof import('./archive/archive.executor.ts')>('./archive/archive.executor')).runArchive,
  docker: async () => (await load<typeof import('./container/container.executor.ts')>('./container/container.executor')).runContainerStep,
  'dag-container': async () => (await load<typeof import('./container/dag-container.executor.ts')>('./container/dag-container.executor')).runDagContainer,
  'workflow-action': async () => (await load<typeof import('./workflow-action/workflow-action.executor.ts')>('./workflow-action/workflow-action.executor')).runWorkflowAction,
};
loaders.container = loaders.docker;
loaders['github-action'] = loaders['workflow-action'];
loaders.github_action = loaders['workflow-action'];
loaders.gha = loaders['workflow-action'];

// Run from source (the tests, under tsx), this thread's modules are CommonJS compiled by tsx's
// require hook, which a dynamic import() of a .ts file does not pass through in a worker thread;
// the build's are ES modules, loaded with import().
const fromSource = import.meta.url.endsWith('.ts');
const requireHere = createRequire(import.meta.url);
function load<Module>(path: string): Promise<Module> {
  return fromSource ? Promise.resolve().then(() => requireHere(`${path}.ts`) as Module) : import(`${path}.js`) as Promise<Module>;
}

const loaded = new Map<string, Promise<ExecutorFn>>();

/** The executor of `type`, its module loaded once; undefined for a type no executor has. */
function executorOf(type: string): ExecutorFn | Promise<ExecutorFn> | undefined {
  if (type === 'shell' || type === 'command') return shell;
  if (!Object.hasOwn(loaders, type)) return undefined;
  let executor = loaded.get(type);
  if (!executor) {
    executor = loaders[type]();
    // A module that failed to load is tried again by the next step, rather than fail every step after.
    executor.catch(() => loaded.delete(type));
    loaded.set(type, executor);
  }
  return executor;
}

export default async function runTask(task: WorkerTask & { port: { close(): void } }): Promise<StepResult> {
  try {
    const executor = executorOf(task.executor.type);
    if (!executor) return { kind: 'error', code: 'unknown_executor', message: `executor "${task.executor.type}" is not supported` };
    return await (typeof executor === 'function' ? executor(task) : (await executor)(task));
  } catch (error) {
    return { kind: 'error', code: 'executor_failed', message: (error as Error).message };
  } finally {
    task.port.close();
  }
}

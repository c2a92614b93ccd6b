// Piscina worker entry: runs one step task with the executor its type names. Never throws:
// results cross the thread boundary as data. With the posix_spawn addon this thread starts shell
// steps itself (the cost does not depend on the server's size) and names their process groups to
// its step host, which stops them if the server crashes; without it, shell steps are relayed to the
// host, which forks them from a small process (shell-steps.ts, step-host.ts).
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';
import type { StepResult } from '../core/index.ts';
import { setWorkerLogDescriptor } from '../logging/worker-log.ts';
import type { ExecutorFn, SpawnMode, WorkerTask } from './protocol.ts';
import { shellSteps } from './shell-steps.ts';
import { spawnMethod } from './shell/spawner.ts';

const data = workerData as { spawnMode?: SpawnMode; stepRegistryDir?: string; logDescriptor?: 1 | 2; logText?: boolean; prepareHost?: boolean } | undefined;
if (data?.logDescriptor) setWorkerLogDescriptor(data.logDescriptor, data.logText === true);
const shell = shellSteps({ spawnMode: data?.spawnMode ?? spawnMethod, stepRegistryDir: data?.stepRegistryDir, prepareHost: data?.prepareHost }).run;

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

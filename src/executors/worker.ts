// Piscina worker entry: runs one step task with the executor its type names. Never throws:
// results cross the thread boundary as data. With the posix_spawn addon this thread starts shell
// steps itself (the cost does not depend on the server's size) and names their process groups to
// its step host, which stops them if the server crashes; without it, shell steps are relayed to the
// host, which forks them from a small process (see step-host.ts).
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
if (data?.prepareHost) void host.ready();

const relayToHost: ExecutorFn = ({ port, ...task }) => host.run(task, port);
const runHere: ExecutorFn = async (task) => {
  await host.ready();
  return runShell({ ...task, onSpawn: (pid) => host.watch(pid, task), onExit: (pid) => host.unwatch(pid) });
};
const shell = mode === 'posix_spawn' ? runHere : relayToHost;

/**
 * An executor loaded at its first step, once per thread: a thread that runs shell steps alone never
 * loads tar, undici, dockerode or ssh2, so that the first step of a run waits for none of them.
 */
function loaded(load: () => Promise<ExecutorFn>): ExecutorFn {
  let executor: Promise<ExecutorFn> | undefined;
  return async (task) => (await (executor ??= load()))(task);
}

const runArchive = loaded(async () => (await import('./archive/archive.executor.ts')).runArchive);
const runHttp = loaded(async () => (await import('./http/http.executor.ts')).runHttp);
const runContainerStep = loaded(async () => (await import('./container/container.executor.ts')).runContainerStep);
const runDagContainer = loaded(async () => (await import('./container/dag-container.executor.ts')).runDagContainer);
const runJq = loaded(async () => (await import('./jq/jq.executor.ts')).runJq);
const runMail = loaded(async () => (await import('./mail/mail.executor.ts')).runMail);
const runSsh = loaded(async () => (await import('./ssh/ssh.executor.ts')).runSsh);
const runWorkflowAction = loaded(async () => (await import('./workflow-action/workflow-action.executor.ts')).runWorkflowAction);

const executors: Record<string, ExecutorFn> = {
  shell,
  command: shell,
  jq: runJq,
  mail: runMail,
  ssh: runSsh,
  http: runHttp,
  archive: runArchive,
  docker: runContainerStep,
  container: runContainerStep,
  'dag-container': runDagContainer,
  'workflow-action': runWorkflowAction,
  'github-action': runWorkflowAction,
  github_action: runWorkflowAction,
  gha: runWorkflowAction,
};

export default async function runTask(task: WorkerTask & { port: { close(): void } }): Promise<StepResult> {
  const executor = executors[task.executor.type];
  try {
    if (!executor) return { kind: 'error', code: 'unknown_executor', message: `executor "${task.executor.type}" is not supported` };
    return await executor(task);
  } catch (error) {
    return { kind: 'error', code: 'executor_failed', message: (error as Error).message };
  } finally {
    task.port.close();
  }
}

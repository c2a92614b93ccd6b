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
import { runArchive } from './archive/archive.executor.ts';
import { runHttp } from './http/http.executor.ts';
import { runContainerStep } from './container/container.executor.ts';
import { runDagContainer } from './container/dag-container.executor.ts';
import { runJq } from './jq/jq.executor.ts';
import { runMail } from './mail/mail.executor.ts';
import { runShell } from './shell/shell.executor.ts';
import { runSsh } from './ssh/ssh.executor.ts';
import { spawnMethod } from './shell/spawner.ts';
import { runWorkflowAction } from './workflow-action/workflow-action.executor.ts';

const data = workerData as { spawnMode?: SpawnMode; stepRegistryDir?: string; logDescriptor?: 1 | 2; logText?: boolean } | undefined;
if (data?.logDescriptor) setWorkerLogDescriptor(data.logDescriptor, data.logText === true);
const mode: SpawnMode = data?.spawnMode ?? spawnMethod;
const host = new HostClient(mode === 'child_process', data?.stepRegistryDir);

const relayToHost: ExecutorFn = ({ port, ...task }) => host.run(task, port);
const runHere: ExecutorFn = async (task) => {
  await host.ready();
  return runShell({ ...task, onSpawn: (pid) => host.watch(pid, task), onExit: (pid) => host.unwatch(pid) });
};
const shell = mode === 'posix_spawn' ? runHere : relayToHost;

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

// Piscina worker entry: runs one step task with the executor its type names. Never throws:
// results cross the thread boundary as data. Shell steps are relayed to this worker's step host
// process, where spawning is cheap; executors that do not spawn run here.
import type { StepResult } from '../core/index.ts';
import { HostClient } from './host-client.ts';
import type { ExecutorFn, WorkerTask } from './protocol.ts';

const host = new HostClient();

const relayToHost: ExecutorFn = ({ port, ...task }) => host.run(task, port);

const executors: Record<string, ExecutorFn> = {
  shell: relayToHost,
  command: relayToHost,
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

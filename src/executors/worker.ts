// Piscina worker entry: runs one step task with the executor its type names. Never throws:
// results cross the thread boundary as data.
import type { StepResult } from '../core/index.ts';
import type { ExecutorFn, WorkerTask } from './protocol.ts';
import { runShell } from './shell/shell.executor.ts';

const executors: Record<string, ExecutorFn> = {
  shell: runShell,
  command: runShell,
};

export default async function runTask(task: WorkerTask): Promise<StepResult> {
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

// The workflow-action executor (workflow-format 5, experimental in Dagu): it runs a marketplace
// action in a container, which needs the action's repository from its marketplace and an image
// registry. Neither is reachable from this deployment, so a step of this type is accepted by
// validation and fails at once, saying so (docs/executors/workflow-action.md says what it would take).
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { workerLog } from '../../logging/worker-log.ts';

export async function runWorkflowAction(task: WorkerTask): Promise<StepResult> {
  const action = task.command?.trim() || '(none)';
  const error = `workflow-action ${action}: this troupe build does not run marketplace actions; `
    + 'they need the action fetched from its marketplace and a container image from a registry, which this deployment cannot reach';
  if (task.stderrPath !== undefined) {
    try {
      await mkdir(dirname(task.stderrPath), { recursive: true });
      await appendFile(task.stderrPath, `${error}\n`);
    } catch (writeError) {
      workerLog('error', { path: task.stderrPath, error: (writeError as Error).message }, 'cannot write a step log');
    }
  }
  return { kind: 'ok', exitCode: 1, error };
}

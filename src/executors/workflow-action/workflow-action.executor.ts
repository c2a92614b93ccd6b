// The workflow-action executor (definition format: executors, experimental in Dagu): it runs a marketplace
// action in a container, which needs the action's repository from its marketplace and an image
// registry. Neither is reachable from this deployment, so a step of this type is accepted by
// validation and fails at once, saying so (docs/executors/workflow-action.md says what it would take).
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { appendToLogs } from '../step-output.ts';

export async function runWorkflowAction(task: WorkerTask): Promise<StepResult> {
  const action = task.command?.trim() || '(none)';
  const error = `workflow-action ${action}: this troupe build does not run marketplace actions; `
    + 'they need the action fetched from its marketplace and a container image from a registry, which this deployment cannot reach';
  await appendToLogs([task.stderrPath, task.stderrCopy], `${error}\n`);
  // Its stdout log exists, empty, as a failed shell step's does.
  await appendToLogs([task.stdoutPath], '', true);
  return { kind: 'ok', exitCode: 1, error };
}

import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { StepOutput } from '../step-output.ts';

export async function runArchive(task: WorkerTask): Promise<StepResult> {
  return new StepOutput(task).finish({ exitCode: 1, error: 'todo' });
}

// Admission of a new run: singleton and maxActiveRuns, decided in one place (the codes of docs/api.md).
import { AppError } from '../core/index.ts';

export interface AdmissionRequest {
  name: string;
  maxActiveRuns: number;
  singleton: boolean;
  /** Runs of this DAG name that are active or about to be. */
  active: number;
  /** Runs of this DAG name waiting in a queue: a singleton start waits for them too. */
  queued?: number;
  /** start answers a singleton conflict with already_running; enqueue and inline runs with max_run_reached. */
  kind: 'start' | 'inline';
}

export function admissionError(request: AdmissionRequest): AppError | undefined {
  if (request.singleton && request.active + (request.queued ?? 0) > 0) {
    const code = request.kind === 'start' ? 'already_running' : 'max_run_reached';
    const what = request.active > 0 ? 'running' : 'queued';
    return new AppError(code, `DAG ${request.name} is already ${what} (singleton mode)`);
  }
  if (request.maxActiveRuns !== -1 && request.active >= request.maxActiveRuns) {
    return new AppError('max_run_reached', `DAG ${request.name} has reached maxActiveRuns (${request.maxActiveRuns})`);
  }
  return undefined;
}

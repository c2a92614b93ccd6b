// Entry of the jq thread (jq-runner.ts): runs one jq program at a time. jq holds its thread while
// it runs; here that blocks no other step.
import { runJqProgram, type JqAnswer } from './jq-program.ts';

export interface JqRequest {
  input: string;
  filter: string;
  raw: boolean;
}

export default function runJqRequest(request: JqRequest): Promise<JqAnswer> {
  return runJqProgram(request.input, request.filter, request.raw)
    .catch((error: Error): JqAnswer => ({ kind: 'error', message: error.message }));
}

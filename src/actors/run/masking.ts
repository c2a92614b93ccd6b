// Whatever of a run may carry a secret is masked before it is recorded, logged or handed to a sub
// DAG run's record: step results (errors, skip reasons, a sub DAG call's result), precondition
// messages, params. The executor masks step output as it streams (core's masker, shared).
import { createMasker, type ParamDef, type StepResult } from '../../core/index.ts';

export function maskText(text: string, secrets: readonly string[]): string {
  return secrets.length === 0 ? text : createMasker(secrets)(text);
}

export function maskResult(result: StepResult, secrets: readonly string[]): StepResult {
  if (secrets.length === 0) return result;
  const mask = createMasker(secrets);
  if (result.kind !== 'ok') return { ...result, message: mask(result.message) };
  return {
    ...result,
    ...(result.output !== undefined ? { output: mask(result.output) } : {}),
    ...(result.error !== undefined ? { error: mask(result.error) } : {}),
  };
}

export function maskParams(params: ParamDef[], secrets: readonly string[]): ParamDef[] {
  if (secrets.length === 0) return params;
  const mask = createMasker(secrets);
  return params.map((param) => ({ ...param, value: mask(param.value) }));
}

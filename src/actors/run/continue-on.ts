// continueOn (definition format: continueOn): whether a failed or skipped step lets its dependents go on, and
// whether it is recorded as succeeded (markSuccess). Pure.
import type { ContinueOn, StepResult } from '../../core/index.ts';

/** A failed step's result against its continueOn: does the failure let dependents run? */
export function failureContinues(continueOn: ContinueOn | undefined, result: StepResult): boolean {
  if (!continueOn) return false;
  if (continueOn.failure) return true;
  if (result.kind !== 'ok') return false;
  if (continueOn.exitCode.includes(result.exitCode)) return true;
  const output = result.output ?? '';
  return continueOn.output.some((pattern) => matches(pattern, output));
}

/** Plain text is a substring; `re:` a regular expression. */
export function matches(pattern: string, text: string): boolean {
  return pattern.startsWith('re:') ? new RegExp(pattern.slice(3)).test(text) : text.includes(pattern);
}

// Pure decisions of retryPolicy and repeatPolicy (definition format: retryPolicy): whether to run a step
// again, and how long to wait first.
import type { RepeatPolicy, RetryPolicy, StepResult } from '../../core/index.ts';

/** Largest timer Node accepts; longer waits are capped to it. */
const MAX_TIMER_MS = 2_147_483_647;

export function failed(result: StepResult): boolean {
  return result.kind === 'error' || (result.kind === 'ok' && (result.exitCode !== 0 || result.error !== undefined));
}

function exitCodeOf(result: StepResult): number | undefined {
  return result.kind === 'ok' ? result.exitCode : undefined;
}

/** A failed execution is retried while retries remain and its exit code is one the policy names (any, when none). */
export function shouldRetry(policy: RetryPolicy | undefined, result: StepResult, retriesDone: number): boolean {
  if (!policy || result.kind === 'skipped' || !failed(result) || retriesDone >= policy.limit) return false;
  if (policy.exitCode.length === 0) return true;
  const code = exitCodeOf(result);
  return code !== undefined && policy.exitCode.includes(code);
}

/**
 * Whether to run again after an execution. `while` repeats while the condition holds (or, without
 * one, while the exit code is one of the policy's; with neither, always); `until` repeats until it
 * holds. A failed execution ends the repeats unless the policy tests exit codes. `executions` counts
 * the executions so far; `limit` caps them.
 */
export function shouldRepeat(policy: RepeatPolicy | undefined, result: StepResult, executions: number, conditionHolds?: boolean): boolean {
  if (!policy || result.kind === 'skipped') return false;
  if (policy.limit !== undefined && executions >= policy.limit) return false;
  const byExitCode = policy.condition === undefined && policy.exitCode.length > 0;
  if (failed(result) && !byExitCode) return false;
  let holds: boolean;
  if (policy.condition !== undefined) holds = conditionHolds === true;
  else if (byExitCode) holds = policy.exitCode.includes(exitCodeOf(result) ?? -1);
  else holds = true;
  return policy.repeat === 'while' ? holds : !holds;
}

/** interval × backoff^attempt (attempt counts from 0), capped by maxIntervalSec, in ms. */
export function waitMs(policy: { intervalSec: number; backoff?: number; maxIntervalSec?: number }, attempt: number): number {
  let seconds = policy.intervalSec * (policy.backoff ?? 1) ** attempt;
  if (policy.maxIntervalSec !== undefined && policy.maxIntervalSec > 0) seconds = Math.min(seconds, policy.maxIntervalSec);
  return Math.min(Math.round(seconds * 1000), MAX_TIMER_MS);
}

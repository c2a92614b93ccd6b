// Sub DAG runs (workflow-format 2.5 call/run, 5.7 dag executor): not pool tasks; the engine starts a
// child run per call (per item with `parallel`) and the step waits for them. The step's output is
// the child's result JSON, so that ${VAR.outputs.key} reads the child's outputs.
import type { RunRecord, StepHandle, StepResult } from '../../core/index.ts';
import { ownValue, runStatusLabel, RunStatus } from '../../core/index.ts';
import { expandVariables } from '../../spec/index.ts';
import { maskText } from '../run/masking.ts';

export interface SubDagCall {
  target: string;
  params?: string | Record<string, string>;
  parallel?: { items: unknown[] | string; maxConcurrent?: number };
  parent: {
    name: string; dagRunId: string; root: { name: string; dagRunId: string }; callers: readonly string[]; specText: string;
    /** The values the parent masks: the child gets them in its params and masks them too. */
    secrets?: readonly string[];
  };
}

/** What the engine offers for sub DAG runs: start one, learn its id, await its final record, stop it. */
export interface SubDagRunner {
  start(call: SubDagCall, params: string): Promise<{ dagName: string; dagRunId: string; finished: Promise<RunRecord> }>;
  stop(dagName: string, dagRunId: string): void;
}

/** The child's result as the calling step's output (Dagu's shape). */
export function childResult(record: RunRecord, params: string) {
  return { name: record.name, dagRunId: record.dagRunId, params, outputs: record.outputVars ?? {}, status: runStatusLabel(record.status) };
}

const succeeded = (record: RunRecord) => record.status === RunStatus.Succeeded || record.status === RunStatus.PartiallySucceeded;

/** `params` of the call with the step's variables (and ITEM for a fan-out item) expanded. */
function paramsText(call: SubDagCall, env: Record<string, string>, item?: unknown): string {
  const scope = item === undefined ? env : { ...env, ITEM: typeof item === 'string' ? item : JSON.stringify(item) };
  const lookup = (name: string) => ownValue(scope, name);
  if (call.params === undefined) return item === undefined ? '' : `ITEM=${JSON.stringify(scope.ITEM)}`;
  if (typeof call.params === 'string') return expandVariables(call.params, lookup);
  return Object.entries(call.params).map(([key, value]) => `${key}=${JSON.stringify(expandVariables(value, lookup))}`).join(' ');
}

/** The items of a fan-out: a list, or a variable holding a JSON list (or whitespace-separated words). */
function itemsOf(items: unknown[] | string, env: Record<string, string>): unknown[] {
  if (Array.isArray(items)) return items;
  const text = expandVariables(items, (name) => ownValue(env, name)).trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // not JSON: words
  }
  return text === '' ? [] : text.split(/\s+/);
}

/**
 * Runs the call as a StepHandle: one child, or one per item at most `maxConcurrent` at a time.
 * `onChild` hears each child as it starts (for the node's subRuns).
 */
export function runSubDags(runner: SubDagRunner, call: SubDagCall, env: Record<string, string>,
  onChild: (child: { dagName: string; dagRunId: string; params: string }) => void): StepHandle {
  const running = new Map<string, string>();
  let stopped = false;
  const runOne = async (item?: unknown) => {
    const params = paramsText(call, env, item);
    const child = await runner.start(call, params);
    running.set(child.dagRunId, child.dagName);
    // The child gets the real values; what is recorded of its params is masked.
    const shown = maskText(params, call.parent.secrets ?? []);
    onChild({ dagName: child.dagName, dagRunId: child.dagRunId, params: shown });
    if (stopped) runner.stop(child.dagName, child.dagRunId);
    const record = await child.finished;
    running.delete(child.dagRunId);
    return { record, params: shown };
  };
  const result = (async (): Promise<StepResult> => {
    if (!call.parallel) {
      const { record, params } = await runOne();
      const output = JSON.stringify(childResult(record, params), null, 2);
      return succeeded(record)
        ? { kind: 'ok', exitCode: 0, output }
        : { kind: 'ok', exitCode: 1, output, error: `sub DAG run ${record.name}/${record.dagRunId} ${runStatusLabel(record.status)}` };
    }
    const items = itemsOf(call.parallel.items, env);
    const limit = call.parallel.maxConcurrent ?? 10;
    const results: Array<{ record: RunRecord; params: string }> = new Array(items.length);
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && !stopped) {
        const index = next++;
        results[index] = await runOne(items[index]);
      }
    }));
    const done = results.filter(Boolean);
    const failedCount = done.filter(({ record }) => !succeeded(record)).length;
    const output = JSON.stringify({
      summary: { total: items.length, succeeded: done.length - failedCount, failed: failedCount },
      results: done.map(({ record, params }) => childResult(record, params)),
      outputs: done.map(({ record }) => record.outputVars ?? {}),
    }, null, 2);
    if (failedCount > 0 || done.length < items.length) return { kind: 'ok', exitCode: 1, output, error: `${failedCount} of ${items.length} sub DAG runs did not succeed` };
    return { kind: 'ok', exitCode: 0, output };
  })().catch((error: Error) => ({ kind: 'error' as const, code: 'sub_dag_failed', message: error.message }));
  return {
    result,
    stop: () => {
      stopped = true;
      for (const [dagRunId, dagName] of running) runner.stop(dagName, dagRunId);
    },
  };
}

// Sub DAG runs (definition format: step fields call/run, the dag executor): not pool tasks; the engine starts a
// child run per call (per distinct item with `parallel`) and the step waits for them. The step's
// output is the child's result JSON, so that ${VAR.outputs.key} reads the child's outputs.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ParamDef, RunRecord, StepHandle, StepResult, TraceExport } from '../../core/index.ts';
import { derivedRunId, ownValue, runStatusLabel, RunStatus } from '../../core/index.ts';
import { escapeForShell, expandVariables, paramsFromText } from '../../definition/index.ts';
import { errorText, log } from '../../logging/index.ts';
import { maskText } from '../run/masking.ts';

export interface SubDagCall {
  target: string;
  params?: string | Record<string, string>;
  parallel?: { items: unknown[] | string; maxConcurrent?: number };
  /** The labels of the worker the children go to (distributed dispatch); absent: where the caller runs. */
  workerSelector?: Record<string, string>;
  /** The calling step's name, and which execution of it this is (repeatPolicy): part of the children's ids. */
  step: string;
  execution?: number;
  parent: {
    name: string; dagRunId: string; root: { name: string; dagRunId: string }; callers: readonly string[]; specText: string;
    /** The values the parent masks: the child gets them in its params and masks them too. */
    secrets?: readonly string[];
    /** A traced parent's: where its spans go; the calling execution's span is `traceParent`. */
    traceExport?: TraceExport;
    traceParent?: string;
  };
}

/** One child run to start: its params as a run request takes them, as its parent shows them, and its id. */
export interface ChildStart {
  params: string;
  shown: string;
  dagRunId: string;
}

/**
 * What the engine offers for sub DAG runs: start one under its id (or run again the one that has it:
 * a retried parent's), learn its effective params, await its final record, stop it.
 */
export interface SubDagRunner {
  start(call: SubDagCall, child: ChildStart): Promise<{ dagName: string; dagRunId: string; params: ParamDef[]; finished: Promise<RunRecord> }>;
  stop(dagName: string, dagRunId: string): void;
}

/**
 * The child's result as the calling step's output (Dagu's shape). `params`: the child's effective
 * params as `KEY=value ...`, left out when it has none.
 */
export function childResult(record: RunRecord, params: string) {
  return { name: record.name, dagRunId: record.dagRunId, ...(params !== '' ? { params } : {}), outputs: record.outputVars ?? {}, status: runStatusLabel(record.status) };
}

/** Params as Dagu writes them in a sub DAG result: `KEY=value`, positional ones as `1=value`, unquoted. */
export function paramsText(params: readonly ParamDef[]): string {
  let position = 0;
  return params.map((param) => `${param.name ?? String(++position)}=${param.value}`).join(' ');
}

const succeeded = (record: RunRecord) => record.status === RunStatus.Succeeded || record.status === RunStatus.PartiallySucceeded;

/**
 * The params a child gets: the call's `params` with the step's variables (and ITEM, for a fan-out
 * item) expanded; without `params`, a fan-out item is the child's first positional parameter (as
 * Dagu: ITEM only expands the step's own params). `shown` is the text recorded in subRuns.
 */
function childParams(call: SubDagCall, env: Record<string, string>, item?: unknown): { params: string; shown: string } {
  const itemText = item === undefined ? undefined : typeof item === 'string' ? item : JSON.stringify(item);
  // Keyed `1`, an item is positional whatever it reads like: `NAME=x` is no param name, only data.
  if (call.params === undefined) return itemText === undefined ? { params: '', shown: '' } : { params: JSON.stringify({ 1: itemText }), shown: itemText };
  const scope = itemText === undefined ? env : { ...env, ITEM: itemText };
  const lookup = (name: string) => ownValue(scope, name);
  const text = typeof call.params === 'string'
    ? expandedParamsText(call.params, lookup)
    : Object.entries(call.params).map(([key, value]) => `${key}=${JSON.stringify(expandVariables(value, lookup))}`).join(' ');
  return { params: text, shown: text };
}

/**
 * `KEY=value` text whose values are expanded one by one, as Dagu does: a value that holds spaces
 * stays one value (`MSG=${MSG}`, MSG `two words`, is `MSG="two words"`, not MSG=two and a
 * positional `words`). JSON text is expanded whole.
 */
function expandedParamsText(template: string, lookup: (name: string) => string | undefined): string {
  if (/^\s*[[{]/.test(template)) return expandVariables(template, lookup);
  return paramsFromText(template).map(({ name, value }) => {
    const expanded = expandVariables(value, lookup);
    const written = (expanded === '' && name === undefined) || /[\s"'\\]/.test(expanded) ? `"${escapeForShell(expanded)}"` : expanded;
    return name === undefined ? written : `${name}=${written}`;
  }).join(' ');
}

/**
 * The children of one execution of the step: one per distinct params (items that give the same
 * params share a run, as Dagu). Each id derives from the parent, the step, its execution and the
 * params, so that a retried parent finds the children it started. The params enter the id masked
 * (an id must not let a secret be guessed); distinct params that mask alike are told apart by order.
 */
export function childStarts(call: SubDagCall, env: Record<string, string>, items: unknown[] | undefined): ChildStart[] {
  const secrets = call.parent.secrets ?? [];
  const byParams = new Map<string, ChildStart>();
  const masksSeen = new Map<string, number>();
  for (const item of items ?? [undefined]) {
    const { params, shown } = childParams(call, env, item);
    if (byParams.has(params)) continue;
    const masked = maskText(params, secrets);
    const alike = masksSeen.get(masked) ?? 0;
    masksSeen.set(masked, alike + 1);
    const { name, dagRunId } = call.parent;
    byParams.set(params, { params, shown, dagRunId: derivedRunId([name, dagRunId, call.step, call.execution ?? 0, call.target, masked, alike]) });
  }
  return [...byParams.values()];
}

/**
 * The items of a fan-out: a list, or a variable holding a JSON list, a JSON object (one item, as
 * Dagu takes it), or whitespace-separated words.
 */
export function itemsOf(items: unknown[] | string, env: Record<string, string>): unknown[] {
  if (Array.isArray(items)) return items;
  const text = expandVariables(items, (name) => ownValue(env, name)).trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed;
    if (parsed !== null && typeof parsed === 'object') return [parsed];
  } catch {
    // not JSON: words
  }
  return text === '' ? [] : text.split(/\s+/);
}

/**
 * Runs the call as a StepHandle: one child, or one per distinct item at most `maxConcurrent` at a
 * time. `onChild` hears each child as it starts (for the node's subRuns).
 */
export function runSubDags(runner: SubDagRunner, written: SubDagCall, env: Record<string, string>,
  onChild: (child: { dagName: string; dagRunId: string; params: string }) => void): StepHandle {
  // A target may name its DAG through the step's variables (`call: ${TARGET}`), as in Dagu.
  const call = { ...written, target: expandVariables(written.target, (name) => ownValue(env, name)) };
  const running = new Map<string, string>();
  const secrets = call.parent.secrets ?? [];
  let stopped = false;
  const runOne = async (start: ChildStart) => {
    const child = await runner.start(call, start);
    running.set(child.dagRunId, child.dagName);
    // The child gets the real values; what is recorded of its params is masked.
    onChild({ dagName: child.dagName, dagRunId: child.dagRunId, params: maskText(start.shown, secrets) });
    if (stopped) runner.stop(child.dagName, child.dagRunId);
    const record = await child.finished;
    running.delete(child.dagRunId);
    return { record, params: maskText(paramsText(child.params), secrets) };
  };
  const result = (async (): Promise<StepResult> => {
    if (!call.parallel) {
      const { record, params } = await runOne(childStarts(call, env, undefined)[0]);
      const output = JSON.stringify(childResult(record, params), null, 2);
      if (!succeeded(record)) return { kind: 'ok', exitCode: 1, output, error: `sub DAG run ${record.name}/${record.dagRunId} ${runStatusLabel(record.status)}` };
      return { kind: 'ok', exitCode: 0, output, ...(record.status === RunStatus.PartiallySucceeded ? { partial: true } : {}) };
    }
    const starts = childStarts(call, env, itemsOf(call.parallel.items, env));
    const limit = call.parallel.maxConcurrent ?? 10;
    const results: Array<{ record: RunRecord; params: string }> = new Array(starts.length);
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(limit, starts.length) }, async () => {
      while (next < starts.length && !stopped) {
        const index = next++;
        results[index] = await runOne(starts[index]);
      }
    }));
    const done = results.filter(Boolean);
    const failedCount = done.filter(({ record }) => !succeeded(record)).length;
    const output = JSON.stringify({
      summary: { total: starts.length, succeeded: done.length - failedCount, failed: failedCount },
      results: done.map(({ record, params }) => childResult(record, params)),
      outputs: done.map(({ record }) => record.outputVars ?? {}),
    }, null, 2);
    if (failedCount > 0 || done.length < starts.length) return { kind: 'ok', exitCode: 1, output, error: `${failedCount} of ${starts.length} sub DAG runs did not succeed` };
    const partial = done.some(({ record }) => record.status === RunStatus.PartiallySucceeded);
    return { kind: 'ok', exitCode: 0, output, ...(partial ? { partial: true } : {}) };
  })().catch((error: Error) => ({ kind: 'error' as const, code: 'sub_dag_failed', message: error.message }));
  return {
    result,
    stop: () => {
      stopped = true;
      for (const [dagRunId, dagName] of running) runner.stop(dagName, dagRunId);
    },
  };
}

/**
 * The call's result also goes to the calling step's stdout file (and the copy its definition
 * names), as Dagu writes it there: the step's log shows what its sub DAG runs gave. Masked as the
 * run masks; a file that cannot be written is logged, and the step goes on.
 */
export function resultInLog(handle: StepHandle, paths: { stdoutPath?: string; stdoutCopy?: string }, secrets: readonly string[]): StepHandle {
  const result = handle.result.then(async (outcome) => {
    if (outcome.kind !== 'ok' || outcome.output === undefined) return outcome;
    const text = `${maskText(outcome.output, secrets)}\n`;
    for (const path of [paths.stdoutPath, paths.stdoutCopy]) {
      if (path === undefined) continue;
      try {
        // The step's folder is there as a rule; a definition's copy may name a new one.
        await appendFile(path, text, { mode: 0o600 }).catch(async (error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
          await mkdir(dirname(path), { recursive: true, mode: 0o700 });
          await appendFile(path, text, { mode: 0o600 });
        });
      } catch (error) {
        log.warn({ path, error: errorText(error) }, "a sub DAG call's result could not be written to its step's log");
      }
    }
    return outcome;
  });
  return { result, stop: (signal, cleanupMs) => handle.stop(signal, cleanupMs) };
}

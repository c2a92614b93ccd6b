// How deep a sub DAG run would sit in its tree. A DAG that calls itself, directly or through
// others, would otherwise start runs without end; the calling step fails at the limit instead.
import type { RunRecord } from '../../core/index.ts';

/** Sub DAG runs nest at most this deep below their root run (docs/api.md). */
export const MAX_SUB_DAG_DEPTH = 20;

/**
 * The DAG names from the root run down to `parent`: a child of `parent` sits at this list's length.
 * Each run's record names its parent; the walk is bounded, so a damaged record cannot loop it.
 */
export function ancestry(get: (name: string, dagRunId: string) => RunRecord | undefined, parent: { name: string; dagRunId: string }): string[] {
  const names: string[] = [];
  let current: { name: string; dagRunId: string } | undefined = parent;
  while (current && names.length <= MAX_SUB_DAG_DEPTH) {
    names.unshift(current.name);
    const record = get(current.name, current.dagRunId);
    current = record?.parentDAGRunId ? { name: record.parentDAGRunName, dagRunId: record.parentDAGRunId } : undefined;
  }
  return names;
}

/** Why a child of `parent` may not start, or undefined when it may. */
export function nestingProblem(chain: string[], target: string): string | undefined {
  if (chain.length < MAX_SUB_DAG_DEPTH + 1) return undefined;
  const path = [...chain, target];
  const shown = path.length > 6 ? [...path.slice(0, 3), '...', ...path.slice(-3)] : path;
  return `sub DAG runs nest deeper than ${MAX_SUB_DAG_DEPTH} levels (${shown.join(' -> ')}): does the DAG call itself?`;
}

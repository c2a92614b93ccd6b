// Finding stored runs the way the API names them: `latest`, and sub DAG runs below a run.
import { AppError, type RunRecord, type RunStore } from '../core/index.ts';
import { MAX_SUB_DAG_DEPTH } from '../actors/index.ts';

/** Looks a run up by name and id, `latest` included; 404 when absent. */
export function findRun(runs: RunStore, name: string, dagRunId: string): RunRecord {
  return found(dagRunId === 'latest' ? runs.latest(name) : runs.get(name, dagRunId), name, dagRunId);
}

/** The run a name and id (`latest` included) stand for, as its name and id; undefined when `latest` finds none. */
export function runIdOf(runs: RunStore, name: string, dagRunId: string): { name: string; dagRunId: string } | undefined {
  return dagRunId === 'latest' ? runs.summaries({ name }, { limit: 1 }).runs[0] : { name, dagRunId };
}

/** findRun, a large run read from the store a slice of its nodes per turn of the event loop (RunStore.read). */
export async function readRun(runs: RunStore, name: string, dagRunId: string): Promise<RunRecord> {
  const id = runIdOf(runs, name, dagRunId);
  return found(id && await runs.read(id.name, id.dagRunId), name, dagRunId);
}

function found(record: RunRecord | undefined, name: string, dagRunId: string): RunRecord {
  if (record) return record;
  throw new AppError('not_found', dagRunId === 'latest' ? `no dag-runs found for DAG ${name}` : `dag-run ID ${dagRunId} not found for DAG ${name}`);
}

/** A sub DAG run of a run (at any depth below it), by its id; 404 when it is not one. */
export function findSubRun(runs: RunStore, name: string, dagRunId: string, subDagRunId: string): RunRecord {
  const search = (record: RunRecord, depth: number): RunRecord | undefined => {
    for (const [childId, childName] of Object.entries(record.children ?? {})) {
      const child = runs.get(childName, childId);
      if (!child) continue;
      if (childId === subDagRunId) return child;
      const deeper = depth < MAX_SUB_DAG_DEPTH ? search(child, depth + 1) : undefined;
      if (deeper) return deeper;
    }
    return undefined;
  };
  const found = search(findRun(runs, name, dagRunId), 0);
  if (!found) throw new AppError('not_found', `sub dag-run ${subDagRunId} not found for dag-run ${dagRunId}`);
  return found;
}

/** The sub DAG runs a run started directly, in the order they started. */
export function subRunsOf(runs: RunStore, name: string, dagRunId: string): RunRecord[] {
  const record = findRun(runs, name, dagRunId);
  return Object.entries(record.children ?? {}).map(([childId, childName]) => runs.get(childName, childId)).filter((child): child is RunRecord => child !== undefined);
}

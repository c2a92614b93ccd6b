// One line when a run starts and one when it ends (name, id, status, duration), from the engine's
// events: the log follows what the API shows, without reading the store.
import { log } from './logger.ts';

/** The part of the engine's events (actors/engine-events.ts) these lines read. */
export interface RunEventLike {
  type: string;
  name?: string;
  dagRunId?: string;
  parentDAGRunId?: string;
  startedAt?: string;
  finishedAt?: string;
}

const FINAL = new Set(['run.succeeded', 'run.failed', 'run.aborted', 'run.partially_succeeded']);

export function logRuns(subscribe: (listener: (event: RunEventLike) => void) => () => void): () => void {
  return subscribe((event) => {
    if (!event.type.startsWith('run.')) return;
    const fields = { dag: event.name, dagRunId: event.dagRunId, ...(event.parentDAGRunId ? { parentDAGRunId: event.parentDAGRunId } : {}) };
    if (event.type === 'run.running') {
      log.info(fields, 'run started');
    } else if (FINAL.has(event.type)) {
      const durationMs = Date.parse(event.finishedAt ?? '') - Date.parse(event.startedAt ?? '');
      log.info({ ...fields, status: event.type.slice(4), ...(Number.isFinite(durationMs) ? { durationMs } : {}) }, 'run ended');
    }
  });
}

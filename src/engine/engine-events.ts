// The events of runs' transitions, derived from the records the engine writes: each write carries
// its events into the store, which numbers them in the record's commit (the event log).
import { isFinalRunStatus, runKey, transitionEvents, type EventBody, type RunRecord, type SeenStatuses } from '../core/index.ts';

export type { EngineEvent, EngineListener } from '../core/index.ts';

/**
 * Remembers, per active run, the statuses its events told last. It reads the writes themselves
 * (the run actor's `persist` action hands each record here with the nodes it changed), not XState
 * inspection: inspecting the actor system cost every run about 10% more CPU.
 */
export class RunTransitions {
  private readonly seen = new Map<string, SeenStatuses>();

  /**
   * The events of a run's record as a run actor wrote it; `changed`: the nodes this write changed.
   * Only those are compared, not every node of a run of thousands of steps on each of its writes.
   */
  of(record: RunRecord, changed: Iterable<number>): EventBody[] {
    const key = runKey(record.name, record.dagRunId);
    const events: EventBody[] = [];
    // The time is stamped only when something is told: most writes change no status.
    let stamp: string | undefined;
    const seen = transitionEvents(this.seen.get(key), record, changed, () => (stamp ??= new Date().toISOString()), events);
    if (isFinalRunStatus(record.status)) this.seen.delete(key);
    else this.seen.set(key, seen);
    return events;
  }

  /** A run's status changed outside a run actor: it was admitted, queued, dequeued, or could not start from its queue. */
  announced(record: RunRecord): EventBody[] {
    return this.of(record, []);
  }
}

// The event log for embedders, as an async iterator: the events after a resume point that match
// a filter, read from the store as the consumer asks for them, then each as it commits. It holds
// nothing for a slow consumer: it reads from where it stopped.
import { eventMatches, type EngineEvent, type EventFilter, type EventLog } from '../core/index.ts';

const PAGE = 500;

export interface FollowOptions {
  /** The last event seen; undefined: only what commits from now on. */
  since?: number;
  filter?: EventFilter;
  /** Ends the iteration. */
  signal?: AbortSignal;
  /**
   * `since` is older than the kept events (or newer than any): told the oldest number kept; the
   * iteration goes on from there.
   */
  onReset?: (oldestSeq: number) => void;
}

export async function* followEvents(log: EventLog, options: FollowOptions = {}): AsyncGenerator<EngineEvent> {
  const { filter = {}, signal } = options;
  let cursor = options.since ?? log.head;
  if (options.since !== undefined && (options.since < log.prunedThrough || options.since > log.head)) {
    options.onReset?.(log.prunedThrough + 1);
    cursor = log.prunedThrough;
  }
  let wake: (() => void) | undefined;
  const stop = log.subscribe(() => {
    wake?.();
    wake = undefined;
  });
  const aborted = () => wake?.();
  signal?.addEventListener('abort', aborted);
  try {
    while (!signal?.aborted) {
      const page = log.read(cursor, PAGE);
      if (page.length === 0) {
        await new Promise<void>((resolve) => { wake = resolve; });
        continue;
      }
      for (const event of page) {
        cursor = event.seq;
        if (eventMatches(filter, event)) yield event;
        if (signal?.aborted) return;
      }
    }
  } finally {
    stop();
    signal?.removeEventListener('abort', aborted);
  }
}

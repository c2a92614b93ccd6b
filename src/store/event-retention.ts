// Keeps the event log to its limits (an age, and a count if one is set): at start, then every
// minute, in batches off the request path.
import type { Clock } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import type { LmdbRunStore } from './lmdb-run-store.ts';

const EVERY_MS = 60_000;

export interface EventRetentionSettings {
  maxAgeMs: number;
  /** 0: no count limit. */
  maxCount: number;
  clock: Clock;
}

export class EventRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly runs: LmdbRunStore, private readonly settings: EventRetentionSettings) {}

  start(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), EVERY_MS).unref();
  }

  /** One pass; a pass under way is shared. Resolves with the events it removed. */
  sweep(): Promise<void> {
    return (this.running ??= this.runs.pruneEvents(this.settings.clock.now() - this.settings.maxAgeMs, this.settings.maxCount)
      .then((removed) => { if (removed > 0) log.debug({ removed }, 'old events removed'); })
      .catch((error: unknown) => log.warn({ error: errorText(error) }, 'old events could not be removed; the next pass tries again'))
      .finally(() => { this.running = undefined; }));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

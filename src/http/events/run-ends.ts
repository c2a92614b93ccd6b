// Waiting for runs to end, from the event log: one listener for every waiting request, woken by
// the run's final event (committed with its final record), never by polling.
import { isFinalRunStatus, isRunEvent, runKey, type EngineEvent, type EventLog, type RunStatus } from '../../core/index.ts';

export class RunEnds {
  private readonly waiting = new Map<string, Set<() => void>>();
  private stopListening: (() => void) | undefined;

  constructor(private readonly log: EventLog) {}

  /**
   * Resolves when the run's final event commits. `isFinal` is read at the call: a run that ended
   * already resolves at once (the store shows a final record only once its event is told).
   */
  wait(name: string, dagRunId: string, isFinal: () => boolean, signal: AbortSignal): Promise<boolean> {
    if (isFinal()) return Promise.resolve(true);
    const key = runKey(name, dagRunId);
    return new Promise((resolve) => {
      const wake = () => {
        forget();
        resolve(true);
      };
      const forget = () => {
        const set = this.waiting.get(key);
        set?.delete(wake);
        if (set?.size === 0) this.waiting.delete(key);
        if (this.waiting.size === 0) {
          this.stopListening?.();
          this.stopListening = undefined;
        }
      };
      signal.addEventListener('abort', () => { forget(); resolve(false); }, { once: true });
      let set = this.waiting.get(key);
      if (!set) this.waiting.set(key, (set = new Set()));
      set.add(wake);
      this.stopListening ??= this.log.subscribe((event) => this.committed(event));
    });
  }

  private committed(event: EngineEvent): void {
    if (!isRunEvent(event) || !isFinalRunStatus(event.status as RunStatus)) return;
    const set = this.waiting.get(runKey(event.name, event.dagRunId));
    if (set) for (const wake of [...set]) wake();
  }
}

// The requests a carrier is answering, so that a server that stops answers them before it closes
// their connections: a client whose request was read gets its answer (200, or the 500 of a run
// refused during shutdown), never a reset.

/** How long a stopping server waits for the answers under way before it closes every connection. */
export const STOP_ANSWERS_MS = 10_000;

export class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];
  /** The server is stopping: answers close their connection. */
  stopping = false;

  /** One request taken; the function given back marks it answered (or abandoned), once. */
  begin(): () => void {
    this.count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  /** Marks the server stopping; resolves once no request is under way, or after `limitMs`, with how many still are. */
  stop(limitMs = STOP_ANSWERS_MS): Promise<number> {
    this.stopping = true;
    if (this.count === 0) return Promise.resolve(0);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.count), limitMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(0);
      });
    });
  }
}

/** The line a stopping server logs for the requests it closes unanswered. */
export function unansweredAtStop(count: number): string {
  return `${count} request(s) still unanswered ${STOP_ANSWERS_MS / 1000} s after the server began to stop: their connections are closed`;
}

// SIGINT and SIGTERM as a user or a process manager sends them: the first asks troupe to stop, a
// later one to stop at once. One signal can arrive twice, though: a terminal's Ctrl-C reaches the
// whole foreground process group, and npm (`npm start`, `npx troupe`) passes the one it got on to
// troupe as well; a process manager may signal both the group and the main process. A repeat
// within RELAYED_MS of the first is taken as that same signal, not as a second one.

/** How soon after the first signal a repeat is the same one relayed. */
export const RELAYED_MS = 500;

type Signal = 'SIGINT' | 'SIGTERM';

export class StopSignals {
  /** Resolves with the first signal. */
  readonly received: Promise<Signal>;
  private firstAt: number | undefined;
  private resolve: (signal: Signal) => void = () => {};
  private readonly listener = (signal: Signal) => this.receive(signal);

  /** Listens from now on: `first` is called at the first signal, `again` (see `onAgain`) at each later one. */
  constructor(private readonly signals: Signal[], private readonly first: (signal: Signal) => void = () => {}, private again: (signal: Signal) => void = () => {}) {
    this.received = new Promise((resolve) => { this.resolve = resolve; });
    for (const signal of signals) process.on(signal, this.listener);
  }

  /** What a signal after the first does from now on. */
  onAgain(handler: (signal: Signal) => void): void {
    this.again = handler;
  }

  /**
   * Stops listening. Within RELAYED_MS of a first signal, the repeat of it may still be on its way
   * (npm relaying the terminal's Ctrl-C) while the process ends: it is still taken as that same
   * signal until then, rather than end the process by Node's default (a command that stopped its
   * run that fast would die of the repeat instead of exiting with its status).
   */
  close(): void {
    const remove = () => {
      for (const signal of this.signals) process.off(signal, this.listener);
    };
    const relayedFor = this.firstAt === undefined ? 0 : this.firstAt + RELAYED_MS - Date.now();
    if (relayedFor <= 0) remove();
    else setTimeout(remove, relayedFor).unref();
  }

  private receive(signal: Signal): void {
    const now = Date.now();
    if (this.firstAt === undefined) {
      this.firstAt = now;
      this.first(signal);
      this.resolve(signal);
    } else if (now - this.firstAt >= RELAYED_MS) {
      this.again(signal);
    }
  }
}

// The run store's health: a value written and read back every PROBE_EVERY_MS in the background;
// a check answers from the newest outcome while it is fresh, without waiting on the disk. uWS
// closes a connection whose pipelined request arrives while an earlier one waits on I/O, and load
// balancers pipeline /health. Checks that find no fresh outcome share the probe in flight: a burst
// costs one write, and no probe can overwrite another between its write and its read.

/** The store is probed this often; a check answers from an outcome younger than PROBE_FRESH_MS. */
const PROBE_EVERY_MS = 2_000;
const PROBE_FRESH_MS = 5_000;

export class StoreProbe {
  private readonly opened = Date.now();
  private probes = 0;
  private probing: Promise<void> | undefined;
  /** How the newest probe ended, and when: checks answer from it while it is fresh. */
  private lastProbe: { at: number; error?: Error } | undefined;
  private readonly timer: NodeJS.Timeout;

  /** `write` commits the value, `read` reads back the value committed. */
  constructor(private readonly write: (value: string) => Promise<unknown>, private readonly read: () => unknown) {
    void this.probeNow().catch(() => undefined);
    this.timer = setInterval(() => { this.probeNow().catch(() => undefined); }, PROBE_EVERY_MS).unref();
  }

  check(): Promise<void> {
    const last = this.lastProbe;
    if (last && Date.now() - last.at < PROBE_FRESH_MS) return last.error ? Promise.reject(last.error) : Promise.resolve();
    return this.probeNow();
  }

  /** No more probes; resolves once the one in flight, if any, has ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.probing?.catch(() => undefined);
  }

  private probeNow(): Promise<void> {
    return (this.probing ??= this.probe().then(
      () => { this.lastProbe = { at: Date.now() }; },
      (error: Error) => { this.lastProbe = { at: Date.now(), error }; throw error; },
    ).finally(() => { this.probing = undefined; }));
  }

  private async probe(): Promise<void> {
    // Unique across restarts too: a write that did not land cannot be mistaken for this one.
    const value = `${this.opened}.${++this.probes}`;
    await this.write(value);
    if (this.read() !== value) throw new Error('the store did not return what was written');
  }
}

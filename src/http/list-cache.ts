// Rendered run listings, kept while the runs they were made from are unchanged. A listing of every
// run is the spec's answer to `GET /dag-runs` (480 KB for 1,000 runs): a dashboard polling it would
// otherwise read and render every run on every poll between two writes.

/** Listings kept, by query: the few a dashboard polls. */
const KEPT_LISTINGS = 32;
/** The most bytes kept: a larger answer is rendered again each time rather than held. */
const MAX_KEPT_BYTES = 16 * 1024 * 1024;

export class ListCache {
  private generation = -1;
  private readonly bodies = new Map<string, Buffer>();
  private keptBytes = 0;

  /**
   * The body `render` makes for `key`, from the cache while `generation` (the store's
   * runsGeneration) has not moved since it was made; made afresh while it is undefined.
   */
  body(generation: number | undefined, key: string, render: () => unknown): Buffer {
    if (generation === undefined) return Buffer.from(JSON.stringify(render()));
    if (generation !== this.generation) {
      this.bodies.clear();
      this.keptBytes = 0;
      this.generation = generation;
    }
    const kept = this.bodies.get(key);
    if (kept) return kept;
    const body = Buffer.from(JSON.stringify(render()));
    if (body.length > MAX_KEPT_BYTES) return body;
    while (this.bodies.size > 0 && (this.bodies.size >= KEPT_LISTINGS || this.keptBytes + body.length > MAX_KEPT_BYTES)) {
      const [oldest, dropped] = this.bodies.entries().next().value!;
      this.bodies.delete(oldest);
      this.keptBytes -= dropped.length;
    }
    this.bodies.set(key, body);
    this.keptBytes += body.length;
    return body;
  }
}

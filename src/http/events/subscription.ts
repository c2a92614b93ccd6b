// One client's view of the event log: the events after its resume point that match its filter,
// read from the store while it catches up, then the live ones as they commit; written to its
// connection, never faster than it reads. A client that falls further behind than its backlog
// allows is told why and disconnected: the server's memory never grows with a slow reader.
import { eventMatches, type EngineEvent, type EventFilter, type EventLog } from '../../core/index.ts';

/** How many events a catching-up client reads from the store per turn of the event loop. */
const PAGE = 500;

/** How a transport writes what a subscription sends. */
export interface Frames {
  event(event: EngineEvent): string;
  /** The resume point was older than what is kept (or newer than anything): re-list, then follow. */
  reset(oldestSeq: number, head: number): string;
  /** The last thing sent before the server disconnects a client. */
  dropped(reason: string, lastSeq: number): string;
}

/** Where a subscription writes: the connection, as the transport holds it. */
export interface FrameSink {
  /** False once the client is behind; `drained` is then called when it caught up. */
  write(chunk: string): boolean;
  end(): void;
}

export interface SubscriptionOptions {
  filter: EventFilter;
  /** The last event the client has seen; undefined: only what commits from now on. */
  since?: number;
  frames: Frames;
  sink: FrameSink;
  /** How many bytes may wait for a client that is behind before it is disconnected. */
  backlogBytes: number;
  /** Told when the subscription ends: the client left, or it was dropped (then `dropped` is true). */
  ended?: (dropped: boolean) => void;
  /** Told of each event written. */
  sent?: (count: number) => void;
  /** Told, for each write of live events, how many milliseconds its oldest event waited since its commit. */
  delayed?: (ms: number) => void;
}

export class Subscription {
  /** The newest event this client is past: delivered, or not its to see. */
  private cursor: number;
  /** The newest event written to the connection. */
  private written: number;
  private catchingUp = true;
  private congested = false;
  private readonly pending: string[] = [];
  private pendingBytes = 0;
  /** When the oldest pending event was committed (performance.now()). */
  private pendingSince = 0;
  private closed = false;
  private scheduled: NodeJS.Immediate | undefined;
  /** Whether anything was written since the last heartbeat check. */
  wroteSinceCheck = false;

  constructor(private readonly log: EventLog, private readonly options: SubscriptionOptions) {
    const { since } = options;
    let cursor = since ?? log.head;
    if (since !== undefined && (since < log.prunedThrough || since > log.head)) {
      this.send(options.frames.reset(log.prunedThrough + 1, log.head));
      cursor = log.prunedThrough;
    }
    this.cursor = this.written = cursor;
    this.catchUp();
  }

  get filter(): EventFilter {
    return this.options.filter;
  }

  get frames(): Frames {
    return this.options.frames;
  }

  /** Whether it takes live events now (not while it reads the store). */
  get live(): boolean {
    return !this.catchingUp && !this.closed;
  }

  /**
   * Committed events, in order, as the hub hands them out; `frameOf(i)` is `events[i]`'s frame.
   * `committedAt`: when the first of them was committed (performance.now()).
   */
  deliver(events: readonly EngineEvent[], frameOf: (index: number) => string, committedAt: number): void {
    if (!this.live) return;
    let chunk = '';
    let count = 0;
    for (let index = 0; index < events.length; index++) {
      const event = events[index];
      if (event.seq <= this.cursor) continue;
      this.cursor = event.seq;
      if (!eventMatches(this.options.filter, event)) continue;
      chunk += frameOf(index);
      count++;
    }
    if (count > 0) this.queue(chunk, count, committedAt);
  }

  /** The client caught up after a write answered false. */
  drained(): void {
    if (this.closed) return;
    this.congested = false;
    if (this.pending.length > 0) {
      const chunk = this.pending.join('');
      this.pending.length = 0;
      this.pendingBytes = 0;
      this.congested = !this.send(chunk);
      this.written = this.cursor;
      this.options.delayed?.(performance.now() - this.pendingSince);
    }
    if (!this.congested && this.catchingUp) this.catchUp();
  }

  /** Writes a chunk that carries no event (a heartbeat), unless the client is behind. */
  nudge(chunk: string): void {
    if (!this.closed && !this.congested) this.congested = !this.send(chunk);
  }

  /** The connection closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.pending.length = 0;
    this.options.ended?.(false);
  }

  /** Reads the store from the cursor a page at a time, yielding between pages, until it is at the head. */
  private catchUp(): void {
    this.scheduled = undefined;
    if (this.closed || this.congested) return;
    const page = this.log.read(this.cursor, PAGE);
    if (page.length === 0) {
      this.catchingUp = false;
      return;
    }
    let chunk = '';
    let count = 0;
    for (const event of page) {
      this.cursor = event.seq;
      if (!eventMatches(this.options.filter, event)) continue;
      chunk += this.options.frames.event(event);
      count++;
    }
    if (count > 0) {
      this.congested = !this.send(chunk);
      this.options.sent?.(count);
    }
    this.written = this.cursor;
    if (!this.congested) this.scheduled = setImmediate(() => this.catchUp());
  }

  private queue(chunk: string, count: number, committedAt: number): void {
    this.options.sent?.(count);
    if (!this.congested) {
      this.congested = !this.send(chunk);
      this.written = this.cursor;
      this.options.delayed?.(performance.now() - committedAt);
      return;
    }
    if (this.pending.length === 0) this.pendingSince = committedAt;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes > this.options.backlogBytes) this.drop();
  }

  private drop(): void {
    const reason = `the client read events slower than they came, and fell more than ${this.options.backlogBytes} bytes behind; resume after event ${this.written}`;
    this.pending.length = 0;
    this.send(this.options.frames.dropped(reason, this.written));
    this.closed = true;
    this.options.sink.end();
    this.options.ended?.(true);
  }

  private send(chunk: string): boolean {
    this.wroteSinceCheck = true;
    return this.options.sink.write(chunk);
  }
}

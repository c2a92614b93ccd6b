// The subscriptions of a server: one listener on the event log, whose committed events are handed
// out as soon as the commit's callbacks are done (a commit's events go out together, not one write
// each, and not a whole turn of a busy event loop later). Each event's frame is made once per
// transport, not once per client: a hundred clients following everything cost a hundred writes of
// the same string.
import type { EngineEvent, EventLog } from '../../core/index.ts';
import { RunEnds } from './run-ends.ts';
import { Subscription, type SubscriptionOptions } from './subscription.ts';

/** What the metrics read. */
export interface EventStreamCounts {
  subscribers: number;
  sent: number;
  dropped: number;
}

export interface EventStreamLimits {
  /** How often an idle client gets a heartbeat. */
  heartbeatMs: number;
  /** How far a client may fall behind before it is disconnected. */
  backlogBytes: number;
}

export class EventHub {
  private readonly subscriptions = new Set<Subscription>();
  private batch: EngineEvent[] = [];
  /** When the batch's first event was committed (performance.now()); undefined: no batch waits. */
  private batchCommittedAt: number | undefined;
  private stopListening: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  readonly counts: EventStreamCounts = { subscribers: 0, sent: 0, dropped: 0 };
  /** Told, for each write of live events, how many seconds its oldest event waited since its commit. */
  observeDelay: ((seconds: number) => void) | undefined;
  /** Requests waiting for runs to end (start-sync). */
  readonly runEnds: RunEnds;

  constructor(readonly log: EventLog, readonly limits: EventStreamLimits) {
    this.runEnds = new RunEnds(log);
  }

  /**
   * A client's subscription; it takes live events once it has caught up. `heartbeat`: what it
   * gets when idle for a heartbeat's time (an SSE comment line); none for a transport that pings.
   */
  subscribe(options: Omit<SubscriptionOptions, 'backlogBytes'> & { heartbeat?: string }): Subscription {
    const { heartbeat } = options;
    const subscription = new Subscription(this.log, {
      ...options,
      backlogBytes: this.limits.backlogBytes,
      sent: (count) => { this.counts.sent += count; },
      delayed: (ms) => this.observeDelay?.(ms / 1000),
      ended: (dropped) => {
        if (dropped) this.counts.dropped++;
        this.remove(subscription);
        options.ended?.(dropped);
      },
    });
    if (heartbeat !== undefined) this.heartbeats.set(subscription, heartbeat);
    this.subscriptions.add(subscription);
    this.counts.subscribers = this.subscriptions.size;
    this.stopListening ??= this.log.subscribe((event) => this.committed(event));
    this.heartbeat ??= setInterval(() => this.beat(), this.limits.heartbeatMs).unref();
    return subscription;
  }

  private readonly heartbeats = new Map<Subscription, string>();

  private remove(subscription: Subscription): void {
    this.subscriptions.delete(subscription);
    this.heartbeats.delete(subscription);
    this.counts.subscribers = this.subscriptions.size;
    if (this.subscriptions.size > 0) return;
    this.stopListening?.();
    this.stopListening = undefined;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private committed(event: EngineEvent): void {
    this.batch.push(event);
    if (this.batchCommittedAt !== undefined) return;
    this.batchCommittedAt = performance.now();
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    const committedAt = this.batchCommittedAt!;
    const events = this.batch;
    this.batch = [];
    this.batchCommittedAt = undefined;
    // Frames by transport (the Frames object), made on first use.
    const made = new Map<unknown, string[]>();
    for (const subscription of this.subscriptions) {
      if (!subscription.live) continue;
      const frames = subscription.frames;
      let list = made.get(frames);
      if (!list) made.set(frames, (list = []));
      const cache = list;
      subscription.deliver(events, (index) => (cache[index] ??= frames.event(events[index])), committedAt);
    }
  }

  /** Idle clients get their heartbeat; one that got anything since the last beat needs none. */
  private beat(): void {
    for (const [subscription, chunk] of this.heartbeats) {
      if (!subscription.wroteSinceCheck) subscription.nudge(chunk);
      subscription.wroteSinceCheck = false;
    }
  }
}

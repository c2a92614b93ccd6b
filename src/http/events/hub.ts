// The subscriptions of a server: one listener on the event log, whose committed events are handed
// out once per turn of the event loop. Each event's frame is made once per transport, not once per
// client: a hundred clients following everything cost a hundred writes of the same string.
import type { EngineEvent, EventLog } from '../../core/index.ts';
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
  private flushing: NodeJS.Immediate | undefined;
  private stopListening: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  readonly counts: EventStreamCounts = { subscribers: 0, sent: 0, dropped: 0 };

  constructor(readonly log: EventLog, readonly limits: EventStreamLimits) {}

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
    this.flushing ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = undefined;
    const events = this.batch;
    this.batch = [];
    // Frames by transport (the Frames object), made on first use.
    const made = new Map<unknown, string[]>();
    for (const subscription of this.subscriptions) {
      if (!subscription.live) continue;
      const frames = subscription.frames;
      let list = made.get(frames);
      if (!list) made.set(frames, (list = []));
      const cache = list;
      subscription.deliver(events, (index) => (cache[index] ??= frames.event(events[index])));
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

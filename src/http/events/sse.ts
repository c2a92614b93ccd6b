// Server-Sent Events: `id:` the event's number, `event:` its type, `data:` the event as JSON.
import type { EngineEvent } from '../../core/index.ts';
import type { HttpResponse } from '../types.ts';
import type { EventHub } from './hub.ts';
import type { EventRequest } from './event-query.ts';
import type { Frames } from './subscription.ts';

/** How soon a browser's EventSource reconnects after the connection drops. */
export const RECONNECT_MS = 2_000;

export const sseFrames: Frames = {
  event: (event: EngineEvent) => `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
  // Its id moves a reconnecting browser's Last-Event-ID to where the kept events begin.
  reset: (oldestSeq, head) => `id: ${oldestSeq - 1}\nevent: reset\ndata: ${JSON.stringify({ oldestSeq, head })}\n\n`,
  dropped: (reason, lastSeq) => `event: dropped\ndata: ${JSON.stringify({ reason, lastSeq })}\n\n`,
};

const HEARTBEAT = ': keepalive\n\n';

export const SSE_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx buffers a response unless told not to: events would arrive in bursts.
  'x-accel-buffering': 'no',
};

/** The answer that streams `request`'s events to the client. */
export function eventStreamResponse(hub: EventHub, request: EventRequest): HttpResponse {
  return {
    status: 200,
    headers: SSE_HEADERS,
    stream: (sink) => {
      sink.write(`retry: ${RECONNECT_MS}\n\n`);
      const subscription = hub.subscribe({ filter: request.filter, ...(request.since !== undefined ? { since: request.since } : {}), frames: sseFrames, sink, heartbeat: HEARTBEAT });
      sink.onDrained(() => subscription.drained());
      sink.onClosed(() => subscription.close());
      if (sink.closed) subscription.close();
    },
  };
}

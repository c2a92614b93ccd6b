// The event stream over WebSocket, whichever carrier holds the socket: the client's messages
// (`subscribe`), its subscription on the hub, and the frames it gets. A carrier only moves text and
// tells of backpressure; everything the protocol decides is here.
import { AppError, type EngineEvent } from '../../core/index.ts';
import type { HttpResponse, RawRequest } from '../types.ts';
import type { EventHub } from './hub.ts';
import { eventRequest } from './event-query.ts';
import type { FrameSink, Frames, Subscription } from './subscription.ts';

/** Close codes a carrier sends: the server stops, a client too slow was dropped. */
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY = 1008;

/** The largest message a client may send (a subscribe with many DAG names fits); a larger one closes the socket (1009). */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * A subscription writes several events as one chunk; a WebSocket message carries one. JSON text never
 * holds a raw newline (JSON.stringify escapes it in strings), so each frame ends with one and the
 * sink splits on it. One shared object: the hub makes each event's frame once per Frames object.
 */
const SEPARATOR = '\n';
export const socketFrames: Frames = {
  event: (event: EngineEvent) => `${JSON.stringify(event)}${SEPARATOR}`,
  reset: (oldestSeq, head) => `${JSON.stringify({ reset: { oldestSeq, head } })}${SEPARATOR}`,
  dropped: (reason, lastSeq) => `${JSON.stringify({ dropped: { reason, lastSeq } })}${SEPARATOR}`,
};

/** The open socket as the carrier holds it. */
export interface SocketPeer {
  /** Sends one text message. False once the client is behind: the carrier then calls `drained` when it caught up. */
  send(text: string): boolean;
  /** Closes the socket with a close frame. */
  close(code: number, reason: string): void;
  /** Runs `sends` so that its messages leave together (uWS corks: one syscall), where the carrier can. */
  batch(sends: () => void): void;
}

/** One client's socket, from its upgrade to its close; the carrier calls these in this order. */
export interface SocketSession {
  opened(peer: SocketPeer): void;
  message(text: string): void;
  drained(): void;
  closed(): void;
}

/** What the API answers to an upgrade request: refused with an HTTP answer, or a session for the socket. */
export type SocketAdmission = { refused: HttpResponse } | { session: SocketSession };

/** The API's entry for WebSocket upgrades (app.ts): a carrier hands it the request, then the socket. */
export interface SocketAcceptor {
  /** The upgrade path (with the API prefix) a carrier serves WebSockets at. */
  readonly path: string;
  /** How many bytes a carrier may hold for a client that is behind: more than a subscription lets pile up before it drops the client. */
  readonly maxBufferedBytes: number;
  acceptSocket(raw: RawRequest): Promise<SocketAdmission>;
}

const SUBSCRIBE_FIELDS = new Set(['dagName', 'dagRunId', 'types', 'since']);

export class EventSocketSession implements SocketSession {
  private peer: SocketPeer | undefined;
  private subscription: Subscription | undefined;
  private ended = false;

  constructor(private readonly hub: EventHub) {}

  opened(peer: SocketPeer): void {
    this.peer = peer;
  }

  message(text: string): void {
    if (this.ended || !this.peer) return;
    let request;
    try {
      request = eventRequest(subscribeFields(text));
    } catch (error) {
      const message = error instanceof AppError ? error.message : 'invalid message';
      this.peer.send(JSON.stringify({ error: { code: 'bad_request', message } }));
      return;
    }
    // The old subscription ends before the new one reads: its pending events are not sent.
    this.subscription?.close();
    const peer = this.peer;
    this.subscription = this.hub.subscribe({
      filter: request.filter,
      ...(request.since !== undefined ? { since: request.since } : {}),
      frames: socketFrames,
      sink: this.sink(peer),
    });
  }

  drained(): void {
    this.subscription?.drained();
  }

  closed(): void {
    this.ended = true;
    this.subscription?.close();
    this.subscription = undefined;
  }

  private sink(peer: SocketPeer): FrameSink {
    return {
      write: (chunk) => {
        if (this.ended) return false;
        let flowing = true;
        peer.batch(() => {
          let start = 0;
          for (let end = chunk.indexOf(SEPARATOR); end >= 0; start = end + 1, end = chunk.indexOf(SEPARATOR, start)) {
            // Every frame is sent: the carrier holds what the client has not read yet.
            if (!peer.send(chunk.slice(start, end))) flowing = false;
          }
        });
        return flowing;
      },
      // Only a dropped client is ended by its subscription.
      end: () => {
        if (this.ended) return;
        this.ended = true;
        peer.close(CLOSE_POLICY, 'too slow: dropped');
      },
    };
  }
}

/** The fields of a `{"subscribe": {...}}` message; a bad_request AppError for anything else. */
function subscribeFields(text: string): Record<string, unknown> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw new AppError('bad_request', 'a message must be JSON: {"subscribe": {"dagName", "dagRunId", "types", "since"}}');
  }
  if (!isObject(message) || Object.keys(message).length !== 1 || !('subscribe' in message)) {
    throw new AppError('bad_request', 'a message must be {"subscribe": {...}}, and nothing else');
  }
  const fields = message.subscribe;
  if (!isObject(fields)) throw new AppError('bad_request', 'subscribe must be an object: {"dagName", "dagRunId", "types", "since"}, each optional');
  const unknown = Object.keys(fields).find((key) => !SUBSCRIBE_FIELDS.has(key));
  if (unknown !== undefined) throw new AppError('bad_request', `subscribe: unknown field ${JSON.stringify(unknown)}; the fields are dagName, dagRunId, types and since`);
  return fields;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

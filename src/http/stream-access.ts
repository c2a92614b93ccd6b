// A stream stays open for hours, long after the check of the credentials that opened it: a session
// that expires, a user removed or given a lesser role, an API key revoked. Each open stream and
// event socket checks its request's credentials again every interval (the event heartbeat's), and
// one no longer accepted gets the error document as its last message, then is closed.
import { errorResponse } from './errors.ts';
import type { HttpResponse } from './types.ts';
import { CLOSE_POLICY, type SocketPeer, type SocketSession } from './events/websocket.ts';

/** Throws the error document's error (unauthorized, forbidden) once the request's credentials are no longer accepted. */
export type Recheck = () => Promise<unknown>;

/** `response`, whose stream (Server-Sent Events) ends with `event: error` once `recheck` refuses. */
export function guardStream(response: HttpResponse, recheck: Recheck, everyMs: number): HttpResponse {
  const { stream } = response;
  if (!stream) return response;
  return {
    ...response,
    stream: (sink) => {
      const timer = every(everyMs, recheck, (document) => {
        sink.write(`event: error\ndata: ${JSON.stringify(document)}\n\n`);
        sink.end();
      });
      sink.onClosed(() => clearInterval(timer));
      stream(sink);
    },
  };
}

/** `session`, whose socket gets `{"error": ...}` and is closed (1008) once `recheck` refuses. */
export function guardSocket(session: SocketSession, recheck: Recheck, everyMs: number): SocketSession {
  let timer: NodeJS.Timeout | undefined;
  return {
    opened(peer: SocketPeer) {
      session.opened(peer);
      timer = every(everyMs, recheck, (document) => {
        peer.send(JSON.stringify({ error: document }));
        peer.close(CLOSE_POLICY, 'the credentials are no longer accepted');
      });
    },
    message: (text) => session.message(text),
    drained: () => session.drained(),
    closed() {
      clearInterval(timer);
      session.closed();
    },
  };
}

function every(everyMs: number, recheck: Recheck, refused: (document: unknown) => void): NodeJS.Timeout {
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    recheck().then(() => { checking = false; }, (error: unknown) => {
      clearInterval(timer);
      refused(errorResponse(error).body);
    });
  }, everyMs);
  timer.unref();
  return timer;
}

// The event stream's WebSockets on uWebSockets.js: uWS speaks the protocol (handshake, pings,
// framing); the API decides who may open one and what it gets (events/websocket.ts).
import type { HttpResponse as UwsResponse, TemplatedApp, WebSocket } from 'uWebSockets.js';
import { CLOSE_GOING_AWAY, CLOSE_POLICY, MAX_MESSAGE_BYTES, type SocketAcceptor, type SocketSession } from './events/websocket.ts';
import type { HttpResponse, RawRequest } from './types.ts';
import type { InFlight } from './in-flight.ts';

interface SocketData {
  session: SocketSession;
  closed: boolean;
}

/** uWS sends a ping once a socket has been silent for about half of this, and closes one that stays silent all of it. */
const IDLE_TIMEOUT_S = 32;
const STATUS_DROPPED = 2;
const STATUS_SUCCESS = 1;

/** What a carrier needs of its HTTP side: to answer a refused upgrade as a normal response that closes the connection. */
export type Refuse = (res: UwsResponse, response: HttpResponse, done: () => void) => void;

/** Serves `sockets.path`; the function given back closes every open socket (1001), for a server that stops. */
export function serveUwsSockets(app: TemplatedApp, sockets: SocketAcceptor, inFlight: InFlight, refuse: Refuse): () => void {
  const open = new Set<WebSocket<SocketData>>();
  const end = (ws: WebSocket<SocketData>, code: number, reason: string) => {
    const data = ws.getUserData();
    if (data.closed) return;
    data.closed = true;
    ws.end(code, reason);
  };
  app.ws<SocketData>(sockets.path, {
    maxPayloadLength: MAX_MESSAGE_BYTES,
    // The subscription holds back and drops a slow client itself; uWS would drop messages silently past this.
    maxBackpressure: sockets.maxBufferedBytes,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const done = inFlight.begin();
      let gone = false;
      res.onAborted(() => {
        gone = true;
        done();
      });
      // uWS lets the request be read only inside this call.
      const headers: Record<string, string> = Object.create(null);
      req.forEach((key, value) => { headers[key] = value; });
      const raw: RawRequest = {
        method: 'GET', path: req.getUrl(), query: req.getQuery() ?? '', headers, body: undefined,
        remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
      };
      void sockets.acceptSocket(raw).then((admission) => {
        if (gone) return;
        if ('refused' in admission) {
          refuse(res, admission.refused, done);
          return;
        }
        gone = true;
        done();
        // No subprotocol is chosen, none offered is echoed; permessage-deflate is off (compression's default).
        //
        // Never inside res.cork(): once cork's callback has upgraded the socket, this binary's cork
        // goes on to read the HTTP response's state from memory the WebSocket now occupies, and when
        // a stray bit reads as "close the connection" it ends the socket it has just opened (the
        // client sees 1006 right after the handshake). An admission that waited on nothing is
        // answered inside uWS's own upgrade callback, which is corked already; one that waited
        // (a first password check) is written uncorked, and uWS prints a warning for it.
        res.upgrade<SocketData>({ session: admission.session, closed: false }, headers['sec-websocket-key'], '', headers['sec-websocket-extensions'] ?? '', context);
      });
    },
    open: (ws) => {
      const data = ws.getUserData();
      open.add(ws);
      data.session.opened({
        send: (text) => {
          if (data.closed) return false;
          const status = ws.send(text, false);
          // Past maxBackpressure uWS drops the message: the client would miss an event unknowingly.
          if (status === STATUS_DROPPED) end(ws, CLOSE_POLICY, 'too slow: dropped');
          return status === STATUS_SUCCESS;
        },
        close: (code, reason) => end(ws, code, reason),
        batch: (sends) => {
          if (!data.closed) ws.cork(sends);
        },
      });
      if (inFlight.stopping) end(ws, CLOSE_GOING_AWAY, 'server stopping');
    },
    message: (ws, message) => ws.getUserData().session.message(Buffer.from(message).toString('utf8')),
    drain: (ws) => ws.getUserData().session.drained(),
    close: (ws) => {
      const data = ws.getUserData();
      data.closed = true;
      open.delete(ws);
      data.session.closed();
    },
  });
  return () => {
    for (const ws of [...open]) end(ws, CLOSE_GOING_AWAY, 'server stopping');
  };
}

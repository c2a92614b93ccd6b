// The event stream's WebSockets on node:http, with the `ws` library speaking the protocol; the API
// decides who may open one and what it gets (events/websocket.ts).
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bodyLength, encodeResponse } from './app.ts';
import { CLOSE_GOING_AWAY, MAX_MESSAGE_BYTES, type SocketAcceptor, type SocketSession } from './events/websocket.ts';
import type { InFlight } from './in-flight.ts';
import type { HttpResponse, RawRequest } from './types.ts';

/** How often each socket is pinged; one that has not answered the previous ping by then is cut. */
const PING_MS = 20_000;
/** Past this many bytes waiting to be written, the client is behind. */
const HIGH_WATER = 64 * 1024;
/** How long a stopping server waits for its sockets to answer the close before it cuts them. */
const CLOSE_WAIT_MS = 1_000;

export interface NodeSockets {
  /** Whether an upgrade request is for the event socket (else it is answered as a plain request). */
  serves(req: IncomingMessage, path: string): boolean;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, raw: RawRequest): void;
  /** Closes every open socket (1001); cuts those that do not close in time. */
  close(): Promise<void>;
}

export function nodeSockets(sockets: SocketAcceptor, inFlight: InFlight): NodeSockets {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false });
  const answered = new WeakSet<WebSocket>();
  const pinger = setInterval(() => {
    for (const ws of server.clients) {
      if (!answered.has(ws)) {
        ws.terminate();
        continue;
      }
      answered.delete(ws);
      ws.ping();
    }
  }, PING_MS).unref();

  const attach = (ws: WebSocket, session: SocketSession) => {
    answered.add(ws);
    ws.on('pong', () => answered.add(ws));
    let closed = false;
    let behind = false;
    // Each send's callback runs once its frame is written to the socket: the last one finds the buffer short again.
    const written = (error?: Error) => {
      if (error || closed || !behind || ws.bufferedAmount >= HIGH_WATER) return;
      behind = false;
      session.drained();
    };
    ws.on('message', (data: Buffer) => session.message(data.toString('utf8')));
    ws.on('close', () => {
      closed = true;
      session.closed();
    });
    // A socket error is followed by its close.
    ws.on('error', () => {});
    session.opened({
      send: (text) => {
        if (closed) return false;
        ws.send(text, written);
        if (ws.bufferedAmount >= HIGH_WATER) behind = true;
        return !behind;
      },
      close: (code, reason) => {
        if (closed) return;
        closed = true;
        ws.close(code, reason);
      },
      // ws writes each message as it is sent; node's socket coalesces what waits.
      batch: (sends) => sends(),
    });
    if (inFlight.stopping) ws.close(CLOSE_GOING_AWAY, 'server stopping');
  };

  return {
    serves: (req, path) => path === sockets.path && req.method === 'GET' && (req.headers.upgrade ?? '').toLowerCase() === 'websocket',
    upgrade: (req, socket, head, raw) => {
      const done = inFlight.begin();
      socket.on('error', () => socket.destroy());
      void sockets.acceptSocket(raw).then((admission) => {
        done();
        if (socket.destroyed) return;
        if ('refused' in admission) {
          socket.end(rawAnswer(admission.refused));
          return;
        }
        server.handleUpgrade(req, socket, head, (ws) => attach(ws, admission.session));
      });
    },
    close: async () => {
      clearInterval(pinger);
      const open = [...server.clients];
      const gone = Promise.all(open.map((ws) => new Promise((resolve) => {
        if (ws.readyState === ws.CLOSED) resolve(undefined);
        else ws.once('close', resolve);
      })));
      for (const ws of open) ws.close(CLOSE_GOING_AWAY, 'server stopping');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([gone, new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_WAIT_MS); })]);
      clearTimeout(timer);
      for (const ws of open) ws.terminate();
    },
  };
}

/** An answer written on a bare socket (no ServerResponse), closing the connection. */
export function rawAnswer(response: HttpResponse): string {
  const encoded = encodeResponse(response);
  const head = [`HTTP/1.1 ${encoded.status} ${STATUS_CODES[encoded.status] ?? ''}`, 'connection: close', `content-length: ${bodyLength(encoded.body)}`];
  for (const [key, value] of Object.entries(encoded.headers)) head.push(`${key}: ${value}`);
  return `${head.join('\r\n')}\r\n\r\n${encoded.body ?? ''}`;
}

// node:http carrier: used when asked for (`--http node`), or when uWebSockets.js cannot load on this
// Node version. It speaks HTTP/1.x as clients expect: pipelined requests are answered in order
// (node:http queues the responses), HTTP/1.0 is answered and the connection closed, and protocol
// errors (bad request line, oversized headers, conflicting Content-Length, timeouts) get the JSON
// error document instead of node's empty answers.
import { ServerResponse, createServer, type IncomingMessage, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { AppError } from '../core/index.ts';
import { bodyLength, encodeResponse, hasNoBody, tooLarge } from './app.ts';
import { errorResponse } from './errors.ts';
import { MAX_BODY_BYTES, type Api, type HttpResponse, type StreamSink } from './types.ts';
import type { RunningServer } from './running-server.ts';
import { listenError } from './listen-error.ts';
import type { TlsFiles } from './tls.ts';
import { errorText, log } from '../logging/index.ts';
import { InFlight, unansweredAtStop } from './in-flight.ts';
import type { SocketAcceptor } from './events/websocket.ts';
import { nodeSockets, rawAnswer } from './node-sockets.ts';

export interface NodeServerOptions {
  /** How long a client may take to send a request's headers. */
  headersTimeoutMs: number;
  /** Serve HTTPS with this pair (already checked by loadTls). */
  tls?: TlsFiles;
  /** The WebSocket upgrades the API accepts. */
  sockets?: SocketAcceptor;
}

export function listenNode(api: Api, host: string, port: number, options: NodeServerOptions): Promise<RunningServer> {
  const headersTimeout = options.headersTimeoutMs;
  const settings = {
    // Checked here, to answer with the error document rather than node's empty 400.
    requireHostHeader: false,
    headersTimeout,
    requestTimeout: Math.max(300_000, headersTimeout),
    // How often node looks for requests past those timeouts; its default (30 s) would make a short
    // headers timeout fire up to 30 s late.
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(headersTimeout / 4))),
  };
  const inFlight = new InFlight();
  /** Per connection, the request whose body is being read: a malformed body is its to answer. */
  const readingBody = new WeakMap<Socket, IncomingMessage>();
  const handle: RequestListener = (req, res) => {
    const answered = inFlight.begin();
    res.once('close', answered);
    const refusal = refuse(req);
    if (refusal) {
      res.shouldKeepAlive = false;
      respond(refusal);
      return;
    }
    readingBody.set(req.socket, req);
    readBody(req).then(async (body) => {
      if (readingBody.get(req.socket) === req) readingBody.delete(req.socket);
      const url = req.url ?? '/';
      const at = url.indexOf('?');
      if (body === 'too-large') res.shouldKeepAlive = false;
      respond(body === 'too-large'
        ? tooLarge
        : await api({
          method: req.method ?? 'GET',
          path: at < 0 ? url : url.slice(0, at),
          query: at < 0 ? '' : url.slice(at + 1),
          headers: req.headers as Record<string, string>,
          body,
          remoteAddress: req.socket.remoteAddress,
        }));
    }, () => {
      // A body cut short by a protocol error was answered (answerClientError) on its connection.
      if (!req.socket.writableEnded) res.destroy();
    }).catch((error: unknown) => {
      // A request must not take the server down: a failure past the API's own handling is logged.
      log.error({ error: errorText(error) }, 'answering a request failed');
      res.destroy();
    });

    function respond(response: HttpResponse): void {
      if (response.stream && req.method !== 'HEAD') {
        // Answered as far as a stopping server is concerned: closing the connections ends it.
        res.writeHead(response.status, response.headers);
        res.flushHeaders();
        answered();
        response.stream(nodeSink(res));
        return;
      }
      const encoded = encodeResponse(response);
      if (inFlight.stopping) res.shouldKeepAlive = false;
      if (!hasNoBody(encoded.status)) encoded.headers['content-length'] = String(bodyLength(encoded.body));
      res.writeHead(encoded.status, encoded.headers);
      // A HEAD answer announces the GET body's length and sends none.
      res.end(req.method === 'HEAD' || hasNoBody(encoded.status) ? undefined : encoded.body);
    }
  };
  const server = options.tls ? createHttpsServer({ ...settings, cert: options.tls.cert, key: options.tls.key }, handle) : createServer(settings, handle);
  server.keepAliveTimeout = 30_000;
  // Without a listener node answers an unknown Expect with a bare 417; the API ignores it, as uWS does.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket, readingBody.get(socket)));
  const sockets = options.sockets ? nodeSockets(options.sockets, inFlight) : undefined;
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const path = at < 0 ? url : url.slice(0, at);
    if (sockets?.serves(req, path)) {
      sockets.upgrade(req, socket, head, {
        method: 'GET', path, query: at < 0 ? '' : url.slice(at + 1), headers: req.headers as Record<string, string>, body: undefined, remoteAddress: socket.remoteAddress,
      });
      return;
    }
    // Once anything listens for upgrades node hands it every request that asks for one (h2c, a
    // WebSocket elsewhere), its body unread: such a request is served as if it had not asked, on a
    // connection that closes after; one with a body is refused rather than served without it.
    socket.on('error', () => socket.destroy());
    if (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined) {
      socket.end(rawAnswer(errorResponse(new AppError('bad_request', `a request that asks to upgrade the connection (Upgrade: ${req.headers.upgrade}) may not carry a body; send it without Upgrade`))));
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => socket.destroySoon());
    handle(req, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(host, port, error.code)));
    server.listen(port, host, () => {
      resolve({
        carrier: 'node',
        scheme: options.tls ? 'https' : 'http',
        port: (server.address() as AddressInfo).port,
        // No new connection; the requests under way are answered (each closing its connection),
        // then the connections left, idle ones, are closed.
        close: async () => {
          const closed = new Promise<void>((done) => server.close(() => done()));
          const [unanswered] = await Promise.all([inFlight.stop(), sockets?.close()]);
          if (unanswered > 0) log.warn(unansweredAtStop(unanswered));
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}

function nodeSink(res: ServerResponse): StreamSink {
  const sink = {
    closed: false,
    write: (chunk: string): boolean => !sink.closed && res.write(chunk),
    onDrained: (listener: () => void): void => { res.on('drain', listener); },
    onClosed: (listener: () => void): void => { res.once('close', listener); },
    end: (): void => {
      if (sink.closed) return;
      sink.closed = true;
      res.end();
    },
  };
  res.once('close', () => { sink.closed = true; });
  return sink;
}

/** Requests node's parser lets through that troupe does not serve. */
function refuse(req: IncomingMessage): HttpResponse | undefined {
  if (req.httpVersionMajor !== 1) return errorResponse(new AppError('bad_request', `HTTP/${req.httpVersion} is not supported; speak HTTP/1.1 or HTTP/1.0`));
  if (req.httpVersionMinor === 1 && req.headers.host === undefined) return errorResponse(new AppError('bad_request', 'an HTTP/1.1 request needs a Host header'));
  return undefined;
}

/** What a parser error or timeout (node's err.code) answers; the connection is closed after it. */
function clientErrorResponse(code: string | undefined): HttpResponse {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return errorResponse(new AppError('headers_too_large', 'request headers exceed the size limit'));
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errorResponse(new AppError('request_timeout', 'the request did not arrive in time'));
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return errorResponse(new AppError('bad_request', 'more than one Content-Length, or Content-Length with Transfer-Encoding'));
    case 'HPE_INVALID_VERSION':
      return errorResponse(new AppError('bad_request', 'unsupported HTTP version; speak HTTP/1.1 or HTTP/1.0'));
    default:
      return errorResponse(new AppError('bad_request', 'malformed HTTP request'));
  }
}

/** `reading`: the request on this connection whose body was being read when the error came. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, reading: IncomingMessage | undefined): void {
  // A response already under way on this connection cannot be followed by another one in the
  // middle; the one not started yet of a request whose own body is malformed (a bad chunk size) is
  // this answer.
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: IncomingMessage } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || (busy && (busy.headersSent || busy.req === undefined || busy.req !== reading))) {
    socket.destroy();
    return;
  }
  socket.end(rawAnswer(clientErrorResponse(error.code)));
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= MAX_BODY_BYTES) return;
      // A body without Content-Length (chunked) is refused as soon as it passes the limit; the
      // connection closes after the answer, the rest unread.
      req.off('data', onData);
      req.pause();
      chunks.length = 0;
      resolve('too-large');
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length > 0 ? Buffer.concat(chunks) : undefined));
    req.once('error', reject);
  });
}

// uWebSockets.js carrier. Rules of uWS: onAborted before any await, copy everything from `req`
// before the first await, write the response inside cork.
//
// What uWS decides before troupe sees a request, with no hook to change it. The build in uws-pack
// 20.0.8 behaves as uWebSockets v20.66-v20.68 (it accepts two Host headers, refused from v20.71;
// it holds a request without header lines, answered 400 from v20.69); lines are v20.68's:
// - HTTP/1.0, and any request line not ending in " HTTP/1.1", get its own 505 HTML page
//   (HttpParser.h:311 and :378-379, the page in HttpErrors.h:36, written by HttpContext.h:262);
//   a line without a space, or no header line, is held as a fragment until the 10 s idle timeout
//   (HttpParser.h:315-316, :323-325, :390-393). Oversized headers: a 431 page; other errors: 400.
// - A request that arrives while the previous one on the connection is unanswered closes the
//   connection (HttpContext.h:152-157, "denying async pipelining"): pipelined requests are answered
//   in order only while each is answered before uWS parses the next, i.e. from the handler's
//   microtasks (which uWS.js runs before it returns to the parser).
// - getHeader returns the first of repeated headers (HttpParser.h:115-124), and the body is framed
//   by that first Content-Length (:499, :559-560): troupe refuses several (`smuggling` below).
// - endWithoutBody(length) never completes the response (HttpResponse.h:200, see `send`).
import { STATUS_CODES } from 'node:http';
import type { HttpResponse as UwsResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { AppError } from '../core/index.ts';
import { bodyLength, encodeResponse, hasNoBody, tooLarge } from './app.ts';
import { errorResponse } from './errors.ts';
import { MAX_BODY_BYTES } from './types.ts';
import type { Api, HttpResponse, RawRequest, StreamSink } from './types.ts';
import type { RunningServer } from './running-server.ts';
import { listenError, probeListen } from './listen-error.ts';
import { errorText, log } from '../logging/index.ts';
import { TlsError, type TlsFiles } from './tls.ts';
import { InFlight, unansweredAtStop } from './in-flight.ts';
import type { SocketAcceptor } from './events/websocket.ts';
import { serveUwsSockets } from './uws-sockets.ts';

type Uws = typeof import('uWebSockets.js');

const bodiless = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

const conflictingLength = errorResponse(new AppError('bad_request', 'more than one Content-Length'));

/** A request's lot: `aborted` once answered or gone (nothing more may be written); `done` ends its time in flight. */
interface RequestState {
  aborted: boolean;
  done: () => void;
  /** The server is stopping: the answer closes the connection. */
  stopping: () => boolean;
  /** A streamed answer's end, when the connection goes first. */
  closed?: () => void;
}

/**
 * `tls`: serve HTTPS with this pair (already checked by loadTls; uWS reads the files again itself).
 * `sockets`: the WebSocket upgrades the API accepts; registered before the catch-all route, which
 * gets a request of that path that is no upgrade.
 */
export function listenUws(uws: Uws, api: Api, host: string, port: number, tls?: TlsFiles, sockets?: SocketAcceptor): Promise<RunningServer> {
  const app = createApp(uws, tls);
  const inFlight = new InFlight();
  const closeSockets = sockets
    ? serveUwsSockets(app, sockets, inFlight, (res, response, done) => send(res, { aborted: false, done, stopping: () => true }, response, true))
    : () => {};
  app.any('/*', (res, req) => {
    const state: RequestState = { aborted: false, done: inFlight.begin(), stopping: () => inFlight.stopping };
    res.onAborted(() => {
      state.aborted = true;
      state.done();
      state.closed?.();
    });
    const method = req.getMethod().toUpperCase();
    // No prototype: a header named __proto__ is a header like any other.
    const headers: Record<string, string> = Object.create(null);
    let lengths = 0;
    req.forEach((key, value) => {
      if (key === 'content-length') lengths++;
      headers[key] = value;
    });
    if (lengths > 1) {
      smuggling(res, state);
      return;
    }
    // Read now: uWS lets the request and the peer's address be read only inside this call.
    const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
    const raw: RawRequest = { method, path: req.getUrl(), query: req.getQuery() ?? '', headers, body: undefined, remoteAddress };
    const length = Number(headers['content-length'] ?? 0);
    if (length > MAX_BODY_BYTES) {
      send(res, state, tooLarge, true);
      return;
    }
    if (bodiless.has(method) && !length && !headers['transfer-encoding']) {
      answer(api, raw, res, state);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (size > MAX_BODY_BYTES) return;
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        send(res, state, tooLarge, true);
        return;
      }
      // The ArrayBuffer is only valid inside this callback: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        raw.body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        answer(api, raw, res, state);
      }
    });
  });
  return new Promise((resolve, reject) => {
    const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void;
    // Exclusive: without it a second server on the same port silently shares it.
    listen.call(app, host, port, (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) {
        void probeListen(host, port).then((code) => reject(listenError(host, port, code)));
        return;
      }
      resolve({
        carrier: 'uws',
        scheme: tls ? 'https' : 'http',
        port: uws.us_socket_local_port(socket as never),
        // No new connection; the requests under way are answered, then every connection closed.
        close: async () => {
          uws.us_listen_socket_close(socket);
          closeSockets();
          const unanswered = await inFlight.stop();
          if (unanswered > 0) log.warn(unansweredAtStop(unanswered));
          app.close();
        },
      });
    });
  });
}

function createApp(uws: Uws, tls: TlsFiles | undefined): TemplatedApp {
  if (!tls) return uws.App();
  try {
    return uws.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile });
  } catch {
    // The pair passed loadTls: the files changed since, or uWS's OpenSSL refuses what node's took.
    throw new TlsError(`cannot serve HTTPS: uWebSockets.js cannot load certificate file ${tls.certFile} with key file ${tls.keyFile}`);
  }
}

function answer(api: Api, raw: RawRequest, res: UwsResponse, state: RequestState): void {
  api(raw).then((response) => send(res, state, response, false, raw.method === 'HEAD')).catch((error: unknown) => {
    // A request must not take the server down: a failure past the API's own handling is logged.
    log.error({ error: errorText(error) }, 'answering a request failed');
    if (!state.aborted) {
      state.aborted = true;
      res.close();
    }
    state.done();
  });
}

/**
 * A request with several Content-Length headers: uWS framed its body by the first, a proxy in front
 * may have used another, and the bytes after it would run as a second request. It is answered 400
 * and the connection closed, and never from inside uWS's parse of the bytes that came with it: if
 * those hold a further request, uWS sees this one unanswered and closes the connection before that
 * request runs (the "denying async pipelining" rule, used here on purpose); an answer given at once
 * would let it run.
 */
function smuggling(res: UwsResponse, state: RequestState): void {
  setImmediate(() => send(res, state, conflictingLength, true));
}

function send(res: UwsResponse, state: RequestState, response: HttpResponse, close = false, head = false): void {
  if (state.aborted) return;
  if (response.stream && !head) {
    openStream(res, state, response.status, response.headers ?? {}, response.stream);
    return;
  }
  const encoded = encodeResponse(response);
  // A HEAD, 204 or 304 answer while stopping keeps its connection until the server closes them all.
  const closing = close || state.stopping();
  let written = true;
  res.cork(() => {
    res.writeStatus(`${encoded.status} ${STATUS_CODES[encoded.status] ?? ''}`);
    for (const [key, value] of Object.entries(encoded.headers)) res.writeHeader(key, value);
    if (close || !(head || hasNoBody(encoded.status))) {
      const { body } = encoded;
      // Answers that close the connection (413, 400 for a smuggling attempt) always carry a body.
      if (!closing && body instanceof Buffer && body.length > AS_WRITABLE_BYTES) written = endAsWritable(res, state, body);
      else res.end(body, closing);
    } else {
      // endWithoutBody(length) leaves the response pending in this uWS (HttpResponse.h internalEnd
      // marks it done only once `length` bytes are written; fixed upstream in c8da12b), and the next
      // request on the connection would then close it; and the binding reads an undefined length as
      // 2^63. Called without arguments it is done and writes no Content-Length: a HEAD answer gets
      // the GET body's length from troupe, a 204 or 304 none.
      if (head && !hasNoBody(encoded.status)) res.writeHeader('content-length', String(bodyLength(encoded.body)));
      res.endWithoutBody();
    }
  });
  state.aborted = true; // answered: nothing more may be written
  // A body still being written is in flight until it is all written (or the connection goes).
  if (written) state.done();
}

/**
 * Bodies larger than this are written as the connection takes them: uWS copies what the socket
 * does not take at once into a buffer of its own, and for the 13 MB details of a run of 10,000
 * steps that copy (and, the first time, the new memory's page faults) cost the main thread 12 - 55 ms.
 */
const AS_WRITABLE_BYTES = 1024 * 1024;

/** Writes `body` as the connection takes it: true when it is all written at once. */
function endAsWritable(res: UwsResponse, state: RequestState, body: Buffer): boolean {
  const from = res.getWriteOffset();
  if (res.tryEnd(body, body.length)[1]) return true;
  res.onWritable((offset) => {
    const [ok, done] = res.tryEnd(body.subarray(offset - from), body.length);
    if (done) state.done();
    return ok;
  });
  return false;
}

/**
 * A streamed answer: the status and headers now, then what the stream writes (chunked). It counts
 * as answered at once, so that a server that stops does not wait for it: closing the connections
 * ends it.
 */
function openStream(res: UwsResponse, state: RequestState, status: number, headers: Record<string, string>, stream: (sink: StreamSink) => void): void {
  const closers: Array<() => void> = [];
  let drained: (() => void) | undefined;
  const sink = {
    closed: false,
    write(chunk: string): boolean {
      if (sink.closed) return false;
      let sent = false;
      res.cork(() => { sent = res.write(chunk); });
      return sent;
    },
    onDrained(listener: () => void): void {
      drained = listener;
    },
    onClosed(listener: () => void): void {
      closers.push(listener);
    },
    end(): void {
      if (sink.closed) return;
      res.cork(() => res.end());
      ended();
    },
  };
  const ended = () => {
    if (sink.closed) return;
    sink.closed = true;
    state.aborted = true;
    for (const close of closers.splice(0)) close();
  };
  state.closed = ended;
  res.onWritable(() => {
    drained?.();
    return true;
  });
  res.cork(() => {
    res.writeStatus(`${status} ${STATUS_CODES[status] ?? ''}`);
    for (const [key, value] of Object.entries(headers)) res.writeHeader(key, value);
  });
  state.done();
  stream(sink);
}

// uWebSockets.js carrier. Rules of uWS: onAborted before any await, copy everything from `req`
// before the first await, write the response inside cork.
import { STATUS_CODES } from 'node:http';
import type { HttpResponse as UwsResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { encodeResponse, tooLarge, type Api, type RawRequest } from './app.ts';
import { MAX_BODY_BYTES } from './types.ts';
import type { HttpResponse } from './types.ts';
import type { RunningServer } from './server.ts';

type Uws = typeof import('uWebSockets.js');

const bodiless = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export function listenUws(uws: Uws, api: Api, host: string, port: number): Promise<RunningServer> {
  const app: TemplatedApp = uws.App();
  app.any('/*', (res, req) => {
    const state = { aborted: false };
    res.onAborted(() => { state.aborted = true; });
    const method = req.getMethod().toUpperCase();
    const headers: Record<string, string> = {};
    req.forEach((key, value) => { headers[key] = value; });
    const raw: RawRequest = { method, path: req.getUrl(), query: req.getQuery() ?? '', headers, body: undefined };
    const length = Number(headers['content-length'] ?? 0);
    if (length > MAX_BODY_BYTES) {
      send(res, state, tooLarge, true);
      return;
    }
    if (bodiless.has(method) && !length && !headers['transfer-encoding']) {
      void api(raw).then((response) => send(res, state, response));
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
        void api(raw).then((response) => send(res, state, response));
      }
    });
  });
  return new Promise((resolve, reject) => {
    const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void;
    // Exclusive: without it a second server on the same port silently shares it.
    listen.call(app, host, port, (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${host}:${port}`));
        return;
      }
      resolve({
        carrier: 'uws',
        port: uws.us_socket_local_port(socket as never),
        close: async () => {
          uws.us_listen_socket_close(socket);
          app.close();
        },
      });
    });
  });
}

function send(res: UwsResponse, state: { aborted: boolean }, response: HttpResponse, close = false): void {
  if (state.aborted) return;
  const encoded = encodeResponse(response);
  res.cork(() => {
    res.writeStatus(`${encoded.status} ${STATUS_CODES[encoded.status] ?? ''}`);
    for (const [key, value] of Object.entries(encoded.headers)) res.writeHeader(key, value);
    if (close) res.writeHeader('connection', 'close');
    res.end(encoded.body, close);
  });
  state.aborted = true; // answered: nothing more may be written
}

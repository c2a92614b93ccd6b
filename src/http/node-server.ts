// node:http carrier: used when uWebSockets.js cannot load on this Node version, or when asked for.
import { createServer, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AppError } from '../core/index.ts';
import { encodeResponse, tooLarge, type Api } from './app.ts';
import { errorResponse, statusOverrides } from './errors.ts';
import { MAX_BODY_BYTES } from './types.ts';
import type { RunningServer } from './server.ts';

export function listenNode(api: Api, host: string, port: number): Promise<RunningServer> {
  // Node refuses an HTTP/1.1 request without Host with a bare 400; it is refused here, with the error document.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    readBody(req).then(async (body) => {
      const url = req.url ?? '/';
      const at = url.indexOf('?');
      const response = body === 'too-large'
        ? tooLarge
        : req.headers.host === undefined && req.httpVersion === '1.1'
        ? errorResponse(new AppError('bad_request', 'the Host header is required'))
        : await api({
          method: req.method ?? 'GET',
          path: at < 0 ? url : url.slice(0, at),
          query: at < 0 ? '' : url.slice(at + 1),
          headers: req.headers as Record<string, string>,
          body,
        });
      const encoded = encodeResponse(response);
      if (body === 'too-large') encoded.headers.connection = 'close';
      res.writeHead(encoded.status, encoded.headers);
      res.end(encoded.body);
    }, () => res.destroy());
  });
  // Without a listener node answers an unknown Expect with a bare 417; the API ignores it, as uWS does.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  server.on('clientError', answerUnparsable);
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve({
        carrier: 'node',
        port: (server.address() as AddressInfo).port,
        close: () => new Promise((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}

/**
 * A request node cannot parse would get a bare status line; the API promises its JSON error
 * document for every error (http-api.md 7), so the answer is written here, and the connection closed.
 */
function answerUnparsable(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const overflow = error.code === 'HPE_HEADER_OVERFLOW';
  const response = errorResponse(
    new AppError('bad_request', overflow ? 'request headers are too large' : `malformed HTTP request (${error.code ?? 'parse error'})`),
    overflow ? statusOverrides.headerOverflow : {},
  );
  const encoded = encodeResponse(response);
  const body = Buffer.from(encoded.body ?? '');
  const head = [`HTTP/1.1 ${encoded.status} ${STATUS_CODES[encoded.status] ?? ''}`, ...Object.entries(encoded.headers).map(([key, value]) => `${key}: ${value}`),
    `content-length: ${body.length}`, 'connection: close'];
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]));
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
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) refused = true;
      else chunks.push(chunk);
    });
    req.once('end', () => resolve(refused ? 'too-large' : chunks.length > 0 ? Buffer.concat(chunks) : undefined));
    req.once('error', reject);
  });
}

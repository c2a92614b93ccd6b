// node:http carrier: used when uWebSockets.js cannot load on this Node version, or when asked for.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeResponse, tooLarge, type Api } from './app.ts';
import { MAX_BODY_BYTES } from './types.ts';
import type { RunningServer } from './server.ts';

export function listenNode(api: Api, host: string, port: number): Promise<RunningServer> {
  const server = createServer((req, res) => {
    readBody(req).then(async (body) => {
      const url = req.url ?? '/';
      const at = url.indexOf('?');
      const response = body === 'too-large'
        ? tooLarge
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

// Starts the API on uWebSockets.js, or on node:http when asked or when uWS cannot load (one warning
// line either way: on uWS, the limits of its HTTP/1.1; see uws-server.ts).
import { createApi } from './app.ts';
import { listenUws } from './uws-server.ts';
import type { ApiDeps } from './types.ts';
import type { Carrier, RunningServer } from './running-server.ts';
import { log } from '../logging/index.ts';
import { TlsError, type TlsFiles } from './tls.ts';

export interface ServerOptions {
  host: string;
  port: number;
  /** 'auto' prefers uWS. */
  carrier: Carrier | 'auto';
  warn?: (message: string) => void;
  /** node:http only: how long a client may take to send a request's headers before 408. */
  headersTimeoutMs: number;
  /** Serve HTTPS with this pair (from loadTls). */
  tls?: TlsFiles;
}

export const UWS_LIMITS = 'troupe: serving HTTP with uWebSockets.js, which answers HTTP/1.0 clients (ab, curl -0) with 505, '
  + 'closes a connection whose pipelined requests wait on I/O (DAG listings, logs, writes), and writes its own HTML for malformed requests; '
  + '--http node (TROUPE_HTTP=node) serves all of these';

export async function startServer(deps: ApiDeps, options: ServerOptions): Promise<RunningServer> {
  const api = createApi(deps);
  const { carrier } = options;
  if (carrier !== 'node') {
    try {
      const uws = await import('uWebSockets.js');
      const server = await listenUws(uws, api, options.host, options.port, options.tls, api.sockets);
      (options.warn ?? ((line: string) => log.warn(line)))(UWS_LIMITS);
      return server;
    } catch (error) {
      if (carrier === 'uws' || error instanceof TlsError || (error as Error).message.startsWith('cannot listen')) throw error;
      (options.warn ?? ((line: string) => log.warn(line)))(`troupe: uWebSockets.js cannot load here (${(error as Error).message.split('\n')[0]}); serving with node:http`);
    }
  }
  // Loaded only for this carrier: with it the `ws` library of its event sockets (several MB held idle).
  const { listenNode } = await import('./node-server.ts');
  return listenNode(api, options.host, options.port, { headersTimeoutMs: options.headersTimeoutMs, tls: options.tls, sockets: api.sockets });
}

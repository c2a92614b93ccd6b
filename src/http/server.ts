// Starts the API on uWebSockets.js, or on node:http when uWS cannot load (one warning line).
import { createApi } from './app.ts';
import { listenNode } from './node-server.ts';
import { listenUws } from './uws-server.ts';
import type { ApiDeps } from './types.ts';

export type Carrier = 'uws' | 'node';

export interface RunningServer {
  carrier: Carrier;
  port: number;
  close(): Promise<void>;
}

export interface ServerOptions {
  host: string;
  port: number;
  /** 'auto' (the default) prefers uWS. */
  carrier?: Carrier | 'auto';
  warn?: (message: string) => void;
}

export async function startServer(deps: ApiDeps, options: ServerOptions): Promise<RunningServer> {
  const api = createApi(deps);
  const carrier = options.carrier ?? 'auto';
  if (carrier !== 'node') {
    try {
      const uws = await import('uWebSockets.js');
      return await listenUws(uws, api, options.host, options.port);
    } catch (error) {
      if (carrier === 'uws' || (error as Error).message.startsWith('cannot listen')) throw error;
      (options.warn ?? console.warn)(`troupe: uWebSockets.js cannot load here (${(error as Error).message.split('\n')[0]}); serving with node:http`);
    }
  }
  return listenNode(api, options.host, options.port);
}

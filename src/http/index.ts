export { startServer, type Carrier, type RunningServer, type ServerOptions } from './server.ts';
export { createApi, API_PREFIX, type Api, type RawRequest } from './app.ts';
export type { ApiDeps, HttpResponse } from './types.ts';
export { RemoteNodes } from './remote-nodes.ts';

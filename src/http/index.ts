export { startServer, type ServerOptions } from './server.ts';
export type { Carrier, RunningServer } from './running-server.ts';
export { apiRouter, createApi, API_PREFIX } from './app.ts';
export type { Api, RawRequest } from './types.ts';
export { buildOpenApiDocument, openApiPath } from './openapi.ts';
export type { ApiDeps, HttpResponse } from './types.ts';
export { RemoteNodes, takesRemoteNode } from './remote-nodes.ts';
export { loadTls, TlsError, type TlsConfig, type TlsFiles } from './tls.ts';
export { EventHub, type EventStreamCounts } from './events/hub.ts';

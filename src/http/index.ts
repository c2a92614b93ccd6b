export { startServer, type Carrier, type RunningServer, type ServerOptions } from './server.ts';
export { apiRouter, createApi, API_PREFIX, type Api, type RawRequest } from './app.ts';
export { buildOpenApiDocument, openApiPath } from './openapi.ts';
export type { ApiDeps, HttpResponse } from './types.ts';
export { RemoteNodes, takesRemoteNode } from './remote-nodes.ts';
export { loadTls, TlsError, type TlsConfig, type TlsFiles } from './tls.ts';

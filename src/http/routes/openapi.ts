// GET /openapi.json: the OpenAPI document of every route the router has, built at the first request.
import type { Router } from '../router.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import { OpenApiResponse } from '../response-schemas.ts';
import type { ApiDeps, HttpRequest, HttpResponse } from '../types.ts';

export function openApiRoutes(router: Router): void {
  let encoded: Promise<Buffer> | undefined;
  const serve = async (_request: HttpRequest, deps: ApiDeps): Promise<HttpResponse> => {
    // Routes are all added before the first request: the document is made once.
    encoded ??= buildOpenApiDocument(router.entries(), deps.version).then((document) => Buffer.from(JSON.stringify(document)));
    return { status: 200, headers: { 'content-type': 'application/json' }, body: await encoded };
  };
  router.add('GET', '/openapi.json', serve, { permission: 'read',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    tag: 'system',
    responses: { 200: { description: 'The document', body: OpenApiResponse } },
  });
}

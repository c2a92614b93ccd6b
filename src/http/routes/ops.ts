// What an operator watches: the Prometheus metrics and the machine's resource history.
import { AppError } from '../../core/index.ts';
import { parseDuration } from '../../ops/index.ts';
import type { QueryParam } from '../query.ts';
import { ResourceHistoryResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { json, type ApiDeps, type HttpRequest } from '../types.ts';

/** What `GET /services/resources/history` answers without `duration` (Dagu's default). */
const DEFAULT_HISTORY = '1h';

async function metrics(_request: HttpRequest, deps: ApiDeps) {
  return { status: 200, headers: { 'content-type': deps.metrics.contentType }, body: await deps.metrics.render() };
}

/** How far back the history goes, in milliseconds. */
const DurationQuery: QueryParam<number> = {
  name: 'duration',
  description: `How far back: a duration such as 30m, 1h or 1h30m (default ${DEFAULT_HISTORY}, at most the 24 h kept)`,
  schema: (Type) => Type.String({ minLength: 1 }),
  read: (query) => {
    const parsed = parseDuration(query.get('duration') ?? DEFAULT_HISTORY);
    if ('problem' in parsed) throw new AppError('bad_request', parsed.problem);
    return parsed.ms;
  },
};

function resourceHistory(request: HttpRequest, deps: ApiDeps) {
  return json(deps.resources.history(DurationQuery.read(request.query)!));
}

export function opsRoutes(router: Router): void {
  router
    // Never behind authentication, whatever the auth mode (docs/api.md): Prometheus scrapes it.
    .add('GET', '/metrics', metrics, {
      public: true,
      operationId: 'getMetrics', summary: 'Prometheus metrics, never behind authentication', tag: 'monitoring',
      responses: { 200: { description: 'The Prometheus text exposition format', text: 'text/plain' } },
    })
    .add('GET', '/services/resources/history', resourceHistory, { permission: 'read',
      operationId: 'getResourceHistory', summary: 'The machine\'s CPU, memory, disk and load, sampled every 5 s', tag: 'monitoring',
      query: [DurationQuery],
      responses: { 200: { description: 'Each series, oldest sample first', body: ResourceHistoryResponse } },
      errors: ['bad_request'],
    });
}

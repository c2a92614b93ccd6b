// What an operator watches: the Prometheus metrics and the machine's resource history.
import { AppError } from '../../core/index.ts';
import { parseDuration } from '../../ops/index.ts';
import type { Router } from '../router.ts';
import { json, type ApiDeps, type HttpRequest } from '../types.ts';

/** What `GET /services/resources/history` answers without `duration` (Dagu's default). */
const DEFAULT_HISTORY = '1h';

async function metrics(_request: HttpRequest, deps: ApiDeps) {
  return { status: 200, headers: { 'content-type': deps.metrics.contentType }, body: await deps.metrics.render() };
}

function resourceHistory(request: HttpRequest, deps: ApiDeps) {
  const parsed = parseDuration(request.query.get('duration') ?? DEFAULT_HISTORY);
  if ('problem' in parsed) throw new AppError('bad_request', parsed.problem);
  return json(deps.resources.history(parsed.ms));
}

export function opsRoutes(router: Router): void {
  router
    // Never behind authentication, whatever the auth mode (http-api.md 5.5): Prometheus scrapes it.
    .add('GET', '/metrics', metrics, { public: true })
    .add('GET', '/services/resources/history', resourceHistory);
}

// /health: 200 when the store can be written and read, 503 with the reason otherwise.
import { HealthResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { json, type ApiDeps, type HttpRequest } from '../types.ts';

async function health(_request: HttpRequest, deps: ApiDeps) {
  const base = {
    version: deps.version,
    uptime: Math.floor((Date.now() - deps.startedAtMs) / 1000),
    timestamp: new Date().toISOString(),
  };
  try {
    await deps.runs.check();
    return json({ status: 'healthy', ...base });
  } catch (error) {
    return json({ status: 'unhealthy', ...base, error: (error as Error).message }, 503);
  }
}

export function systemRoutes(router: Router): void {
  router.add('GET', '/health', health, { permission: 'read',
    operationId: 'getHealthStatus',
    summary: 'Whether the store can be written and read',
    tag: 'system',
    responses: {
      200: { description: 'Healthy', body: HealthResponse },
      503: { description: 'Unhealthy: `error` says why', body: HealthResponse },
    },
  });
}

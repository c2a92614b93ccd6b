// /workers: the workers that run DAG runs for this server, in Dagu's shape. Without distributed
// dispatch (config.yaml `distributed.redis`) this server runs every DAG run itself and lists none,
// as Dagu does without a coordinator; with it, the workers whose heartbeats Redis holds. Redis out
// of reach is a problem listed in `errors`, never a failed request.
import { errorText } from '../../logging/index.ts';
import { WorkersListResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { json } from '../types.ts';

export function workerRoutes(router: Router): void {
  router.add('GET', '/workers', async (_request, deps) => {
    if (!deps.workers) return json({ workers: [], errors: [] });
    try {
      return json({ workers: await deps.workers(), errors: [] });
    } catch (error) {
      return json({ workers: [], errors: [`the workers could not be read from Redis: ${errorText(error)}`] });
    }
  }, { permission: 'read',
    operationId: 'getWorkers',
    summary: 'The workers that run DAG runs with a workerSelector for this server (none without distributed dispatch)',
    tag: 'system',
    responses: { 200: { description: 'The workers, and problems met asking them', body: WorkersListResponse } },
  });
}

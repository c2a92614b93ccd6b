// /workers: the workers that run DAG runs for this server, in Dagu's shape. This server runs every
// DAG run itself (a DAG's workerSelector is ignored, and its run log says so), so it lists none, as
// Dagu does without a coordinator.
import { WorkersListResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { json } from '../types.ts';

export function workerRoutes(router: Router): void {
  router.add('GET', '/workers', () => json({ workers: [], errors: [] }), { permission: 'read',
    operationId: 'getWorkers',
    summary: 'The workers that run DAG runs for this server: none, since it runs every run itself',
    tag: 'system',
    responses: { 200: { description: 'The workers, and problems met asking them', body: WorkersListResponse } },
  });
}

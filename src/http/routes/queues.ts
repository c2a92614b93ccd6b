// Queues: enqueueing (a stored DAG, an inline spec), dequeue, reschedule, the queue listing and a
// custom queue's live limit (docs/api.md, Queues).
import { AppError } from '../../core/index.ts';
import type { Router } from '../router.ts';
import { queueView } from '../present.ts';
import { EnqueueBody, InlineEnqueueBody, QueueLimitBody, RescheduleBody, parseBody } from '../schemas.ts';
import { empty, json, type ApiDeps, type HttpRequest } from '../types.ts';

async function enqueueDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(EnqueueBody, request.body);
  return json(await deps.engine.enqueueDag(request.params.fileName, body));
}

async function enqueueInline(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(InlineEnqueueBody, request.body);
  if (body.spec === undefined || body.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
  return json(await deps.engine.enqueueInline({ ...body, spec: body.spec }));
}

async function dequeue(request: HttpRequest, deps: ApiDeps) {
  await deps.engine.dequeue(request.params.name, request.params.dagRunId);
  return empty(200);
}

async function reschedule(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(RescheduleBody, request.body);
  return json(await deps.engine.reschedule(request.params.name, request.params.dagRunId, body));
}

function listQueues(_request: HttpRequest, deps: ApiDeps) {
  return json({ queues: deps.engine.queues().map(queueView) });
}

async function setQueueLimit(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(QueueLimitBody, request.body);
  deps.engine.setQueueLimit(request.params.queue, body.maxConcurrency);
  const [queue] = deps.engine.queues(request.params.queue);
  return json(queueView(queue));
}

export function queueRoutes(router: Router): void {
  router
    .add('POST', '/dags/:fileName/enqueue', enqueueDag)
    .add('POST', '/dag-runs/enqueue', enqueueInline)
    .add('GET', '/dag-runs/:name/:dagRunId/dequeue', dequeue)
    .add('POST', '/dag-runs/:name/:dagRunId/reschedule', reschedule)
    .add('GET', '/queues', listQueues)
    .add('PATCH', '/queues/:queue', setQueueLimit);
}

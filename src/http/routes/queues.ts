// Queues: enqueueing (a stored DAG, an inline spec), dequeue, reschedule, the queue listing and a
// custom queue's live limit (docs/api.md, Queues).
import { AppError } from '../../core/index.ts';
import type { Router } from '../router.ts';
import { queueView } from '../present.ts';
import { DagRunIdResponse, QueueResponse, QueuesResponse, RescheduleResponse } from '../response-schemas.ts';
import { EnqueueBody, InlineEnqueueBody, QueueLimitBody, RescheduleBody, parseBody } from '../schemas.ts';
import { callerTrace, empty, json, type ApiDeps, type HttpRequest } from '../types.ts';

async function enqueueDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(EnqueueBody, request.body);
  return json(await deps.engine.enqueueDag(request.params.fileName, { ...body, ...callerTrace(request) }));
}

async function enqueueInline(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(InlineEnqueueBody, request.body);
  if (body.spec === undefined || body.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
  return json(await deps.engine.enqueueInline({ ...body, spec: body.spec, ...callerTrace(request) }));
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
    .add('POST', '/dags/:fileName/enqueue', enqueueDag, { permission: 'run', idempotent: true,
      operationId: 'enqueueDAGDAGRun', summary: 'Queue a run of a stored DAG', tag: 'queues',
      description: 'The run waits in the request\'s queue, else the DAG\'s `queue`, else the DAG\'s own queue.',
      body: EnqueueBody,
      responses: { 200: { description: 'Queued', body: DagRunIdResponse } },
      errors: ['bad_request', 'not_found', 'max_run_reached', 'already_exists', 'insufficient_storage'],
    })
    .add('POST', '/dag-runs/enqueue', enqueueInline, { permission: 'write', idempotent: true,
      operationId: 'enqueueDAGRunFromSpec', summary: 'Queue a run of an inline spec', tag: 'queues',
      description: 'Refused (409 max_run_reached) while the DAG already has a run queued, or maxActiveRuns runs active.',
      body: InlineEnqueueBody,
      responses: { 200: { description: 'Queued', body: DagRunIdResponse } },
      errors: ['bad_request', 'max_run_reached', 'already_exists', 'insufficient_storage'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/dequeue', dequeue, { permission: 'run', writes: true,
      operationId: 'dequeueDAGRun', summary: 'Take a queued run out of its queue (recorded aborted)', tag: 'queues',
      description: 'A GET, as in Dagu\'s API, that changes the run: refused (403) when a browser sends it from another site without a Bearer token.',
      responses: { 200: { description: 'Dequeued; no body' } },
      errors: ['not_found', 'insufficient_storage'],
    })
    .add('POST', '/dag-runs/:name/:dagRunId/reschedule', reschedule, { permission: 'run',
      operationId: 'rescheduleDAGRun', summary: 'A new run of a finished one, with its definition and params, as a singleton', tag: 'queues',
      body: RescheduleBody,
      responses: { 200: { description: 'Started, or queued when its custom queue is full', body: RescheduleResponse } },
      errors: ['bad_request', 'not_found', 'max_run_reached', 'already_exists', 'insufficient_storage'],
    })
    .add('GET', '/queues', listQueues, { permission: 'read',
      operationId: 'listQueues', summary: 'The queues with their running and queued runs', tag: 'queues',
      responses: { 200: { description: 'Every custom queue, and each DAG queue with runs', body: QueuesResponse } },
    })
    .add('PATCH', '/queues/:queue', setQueueLimit, { permission: 'write',
      operationId: 'updateQueueLimit', summary: 'Change a custom queue\'s maxConcurrency, live (troupe)', tag: 'queues',
      body: QueueLimitBody,
      responses: { 200: { description: 'The queue', body: QueueResponse } },
      errors: ['bad_request', 'not_found'],
    });
}

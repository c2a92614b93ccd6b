// A step's stdout or stderr followed as it is written: Server-Sent Events, resumable by byte offset.
import { AppError, stepNodeOf } from '../../core/index.ts';
import { EventQuery } from '../events/event-query.ts';
import { stepLogStreamResponse } from '../events/log-stream.ts';
import { enumQuery, intQuery } from '../query.ts';
import type { Router } from '../router.ts';
import type { ApiDeps, HttpRequest, HttpResponse } from '../types.ts';
import { runOf } from './dag-runs.ts';

const LogStreamQuery = {
  stream: enumQuery('stream', 'stdout (the default) or stderr', ['stdout', 'stderr']),
  byteOffset: intQuery('byteOffset', 'Resume from this byte of the log: the `id` of the last line received (the Last-Event-ID header wins when both are sent)', 0),
  partial: enumQuery('partial', 'true: also send the last line as written so far while it has no line break yet (a `partial` message), e.g. a prompt', ['true', 'false']),
  token: EventQuery.token,
};

/** Where the client resumes: a reconnecting browser's Last-Event-ID, else `byteOffset`, else the log's beginning. */
function resumeOffset(request: HttpRequest): number {
  const lastEventId = request.headers['last-event-id'];
  if (lastEventId === undefined || lastEventId === '') return LogStreamQuery.byteOffset.read(request.query) ?? 0;
  if (!/^[0-9]{1,15}$/.test(lastEventId)) throw new AppError('bad_request', 'Last-Event-ID must be a byte offset of the log (an integer, 0 or more)');
  return Number(lastEventId);
}

function streamStepLog(request: HttpRequest, deps: ApiDeps): HttpResponse {
  const record = runOf(request, deps);
  const { stepName } = request.params;
  const node = stepNodeOf(record, stepName);
  if (!node) throw new AppError('not_found', `step ${stepName} not found in DAG ${record.name}`);
  const stream = LogStreamQuery.stream.read(request.query) ?? 'stdout';
  const from = resumeOffset(request);
  return stepLogStreamResponse(
    { runs: deps.runs, logs: deps.logs, subscribe: (listener) => deps.engine.subscribe(listener), heartbeatMs: deps.eventHub.limits.heartbeatMs },
    // The path comes from the run record, never from the request.
    { name: record.name, dagRunId: record.dagRunId, stepName, path: stream === 'stdout' ? node.stdout : node.stderr, from, partial: LogStreamQuery.partial.read(request.query) === 'true' },
  );
}

export function logStreamRoutes(router: Router): void {
  const doc = {
    permission: 'read', tokenInQuery: true, tag: 'dag-runs',
    description: 'Each line of the log as it is written: `id:` the byte offset just after the line, `data:` the line (a carriage return in it starts a new `data:` line). '
      + 'While the step runs only whole lines are sent; once it has ended and its log was read to the end, the last line (even without a line break) and an `end` message '
      + 'with `{"status", "statusLabel", "nextOffset"}` (the node\'s status and where the log ended), then the response ends. '
      + 'With `partial=true`, a line begun and not ended yet (a prompt, a progress mark) is also sent as written so far, as a `partial` message without `id`, '
      + 'again each time it grows; the line is sent whole once it ends. '
      + 'A client resumes with Last-Event-ID or `byteOffset`. Idle connections get a comment line.',
    query: Object.values(LogStreamQuery),
    responses: { 200: { description: 'The log as an event stream (text/event-stream), open until the step has ended', text: 'text/event-stream' } },
    errors: ['bad_request', 'not_found'],
  } as const;
  router
    .add('GET', '/dag-runs/:name/:dagRunId/steps/:stepName/log/stream', streamStepLog, { ...doc,
      operationId: 'streamDAGRunStepLog', summary: 'Follow a step\'s stdout or stderr as it is written (Server-Sent Events)' })
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/steps/:stepName/log/stream', streamStepLog, { ...doc,
      operationId: 'streamSubDAGRunStepLog', summary: 'Follow a sub DAG run step\'s stdout or stderr as it is written (Server-Sent Events)' });
}

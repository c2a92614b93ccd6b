// The event stream: what happens, as it commits, resumable from an event number.
import { Type } from 'typebox';
import { eventRequestOf, EventQuery } from '../events/event-query.ts';
import { eventStreamResponse } from '../events/sse.ts';
import type { Router } from '../router.ts';
import type { ApiDeps, HttpRequest, HttpResponse } from '../types.ts';

function streamEvents(request: HttpRequest, deps: ApiDeps): HttpResponse {
  return eventStreamResponse(deps.eventHub, eventRequestOf(request.query, request.headers));
}

export function eventRoutes(router: Router): void {
  router.add('GET', '/events', streamEvents, { permission: 'read', tokenInQuery: true,
    operationId: 'streamEvents', summary: 'Follow what happens: Server-Sent Events, resumable', tag: 'monitoring',
    description: 'Each message: `id:` the event number, `event:` its type, `data:` the event as JSON (with `seq`). '
      + 'A client resumes with Last-Event-ID or `since`; a resume point older than what is kept gets one `reset` message first. '
      + 'Idle connections get a comment line; a client that falls too far behind gets a `dropped` message and is disconnected.',
    query: Object.values(EventQuery),
    responses: { 200: { description: 'The event stream (text/event-stream), open until either side ends it', text: 'text/event-stream' } },
    errors: ['bad_request'],
  });
}

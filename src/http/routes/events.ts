// The event stream: what happens, as it commits, resumable from an event number; as Server-Sent
// Events, or over a WebSocket (events/websocket.ts; the carriers upgrade, this route answers a
// request that did not ask to).
import { AppError } from '../../core/index.ts';
import { errorResponse } from '../errors.ts';
import { eventRequestOf, EventQuery } from '../events/event-query.ts';
import { eventStreamResponse } from '../events/sse.ts';
import type { Router } from '../router.ts';
import type { ApiDeps, HttpRequest, HttpResponse } from '../types.ts';

/** Where the WebSocket is served, below the API prefix. */
export const EVENTS_SOCKET_PATH = '/events/ws';

function streamEvents(request: HttpRequest, deps: ApiDeps): HttpResponse {
  return eventStreamResponse(deps.eventHub, eventRequestOf(request.query, request.headers));
}

/** A plain GET: the route speaks WebSocket only (426 would say so, but every bad request of the API is 400). */
function notUpgraded(): HttpResponse {
  const refused = errorResponse(new AppError('bad_request', 'this route serves the event stream over WebSocket: connect with a WebSocket client (Upgrade: websocket)'));
  return { ...refused, headers: { ...refused.headers, upgrade: 'websocket' } };
}

export function eventRoutes(router: Router): void {
  router.add('GET', '/events', streamEvents, { permission: 'read', tokenInQuery: true,
    operationId: 'streamEvents', summary: 'Follow what happens: Server-Sent Events, resumable', tag: 'monitoring',
    description: 'Each message: `id:` the event number, `event:` its type, `data:` the event as JSON (with `seq`). '
      + 'A client resumes with Last-Event-ID or `since`; a resume point older than what is kept gets one `reset` message first. '
      + 'Idle connections get a comment line; a client that falls too far behind gets a `dropped` message and is disconnected. '
      + `The same stream is served over WebSocket at ${EVENTS_SOCKET_PATH}.`,
    query: Object.values(EventQuery),
    responses: { 200: { description: 'The event stream (text/event-stream), open until either side ends it', text: 'text/event-stream' } },
    errors: ['bad_request'],
  });
  router.add('GET', EVENTS_SOCKET_PATH, notUpgraded, { permission: 'read', tokenInQuery: true,
    operationId: 'streamEventsWebSocket', summary: 'Follow what happens over a WebSocket', tag: 'monitoring',
    description: 'A WebSocket upgrade (101). The client sends a text message `{"subscribe": {"dagName"?, "dagRunId"?, "types"?, "since"?}}` '
      + '(names and types as a string or an array of strings) and gets one JSON text message per event (the event with its `seq`), '
      + 'from `since` on or from now; a new `subscribe` replaces the subscription. A bad message gets `{"error": {"code", "message"}}` and the socket stays open; '
      + 'a resume point older than what is kept gets `{"reset": {"oldestSeq", "head"}}` first; a client that falls too far behind gets '
      + '`{"dropped": {"reason", "lastSeq"}}` and close code 1008. Credentials: the session cookie, an Authorization header, or `token`; '
      + 'a browser page of another origin is refused (403) unless it sends a token or its origin is in cors.allowOrigins. '
      + 'A request without Upgrade: websocket is answered 400.',
    query: [EventQuery.token],
    responses: { 101: { description: 'Switching to the WebSocket protocol' } },
    errors: ['bad_request'],
  });
}

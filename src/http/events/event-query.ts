// What a client asks of the event stream, from the query (and, on a reconnect, the Last-Event-ID
// header a browser sends): its filter and where it resumes. Bad values are 400, never ignored.
import { AppError, EVENT_KINDS, EVENT_TYPES, dagNameProblem, dagRunIdProblem, type EventFilter } from '../../core/index.ts';
import { stringQuery, type QueryParam } from '../query.ts';

const KNOWN_TYPES = new Set<string>([...EVENT_TYPES, ...EVENT_KINDS]);

export const EventQuery = {
  dagName: stringQuery('dagName', 'Only the events of these DAGs (one name, or a comma list)'),
  dagRunId: stringQuery('dagRunId', 'Only the events of this run'),
  types: stringQuery('types', 'Only these event types (a comma list; run.*, step.*, dag.* and queue.* take a whole kind)'),
  since: stringQuery('since', 'Resume after this event number (the Last-Event-ID header wins when both are sent)'),
  token: stringQuery('token', 'An API key or token, for clients that cannot send headers (a browser\'s EventSource); never logged'),
} satisfies Record<string, QueryParam<string>>;

export interface EventRequest {
  filter: EventFilter;
  since?: number;
}

/** The filter and resume point of a subscription, from its fields (the query, or a WebSocket message). */
export function eventRequest(fields: { dagName?: unknown; dagRunId?: unknown; types?: unknown; since?: unknown }): EventRequest {
  const filter: EventFilter = {};
  const names = listOf(fields.dagName, 'dagName');
  if (names) {
    for (const name of names) {
      const problem = dagNameProblem(name);
      if (problem) throw new AppError('bad_request', `dagName: ${problem}`);
    }
    filter.dagNames = names;
  }
  if (fields.dagRunId !== undefined) {
    if (typeof fields.dagRunId !== 'string') throw new AppError('bad_request', 'dagRunId must be a string');
    const problem = dagRunIdProblem(fields.dagRunId);
    if (problem) throw new AppError('bad_request', `dagRunId: ${problem}`);
    filter.dagRunId = fields.dagRunId;
  }
  const types = listOf(fields.types, 'types');
  if (types) {
    const unknown = types.find((type) => !KNOWN_TYPES.has(type));
    if (unknown !== undefined) throw new AppError('bad_request', `types: ${JSON.stringify(unknown)} is not an event type; the types are ${[...EVENT_KINDS, ...EVENT_TYPES].join(', ')}`);
    filter.types = types;
  }
  const since = sequence(fields.since, 'since');
  return { filter, ...(since !== undefined ? { since } : {}) };
}

/** From a request: its query, and the Last-Event-ID header of a reconnecting browser. */
export function eventRequestOf(query: URLSearchParams, headers: Record<string, string>): EventRequest {
  const lastEventId = headers['last-event-id'];
  return eventRequest({
    dagName: EventQuery.dagName.read(query),
    dagRunId: EventQuery.dagRunId.read(query),
    types: EventQuery.types.read(query),
    since: lastEventId !== undefined && lastEventId !== '' ? sequence(lastEventId, 'Last-Event-ID') : EventQuery.since.read(query),
  });
}

/** A comma list (or, from a WebSocket message, an array of strings); undefined when not given. */
function listOf(value: unknown, name: string): string[] | undefined {
  if (value === undefined) return undefined;
  const items = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(items) || items.some((item) => typeof item !== 'string')) throw new AppError('bad_request', `${name} must be a comma list of names`);
  const list = (items as string[]).map((item) => item.trim());
  if (list.length === 0 || list.some((item) => item === '')) throw new AppError('bad_request', `${name} has an empty item`);
  return list;
}

function sequence(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 0) throw new AppError('bad_request', `${name} must be an event number (an integer, 0 or more)`);
  return number;
}

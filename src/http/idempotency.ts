// Idempotent submits: a route that opts in (RouteOptions.idempotent) acts once per caller and
// Idempotency-Key, and a repeat of the same request within the window gets the first answer again.
// Answers are kept by the IdempotencyStore port; which requests are still being answered is known
// to this process only, so a crash never leaves a key held.
import { createHash, type Hash } from 'node:crypto';
import { AppError, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_WINDOW_MS, type IdempotencyStore } from '../core/index.ts';
import type { Identity } from '../auth/index.ts';
import { errorText, log } from '../logging/index.ts';
import { errorResponse } from './errors.ts';
import type { Handler, HttpRequest, HttpResponse } from './types.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Printable ASCII; spaces inside only (a header value's outer spaces are not part of it anyway). */
const KEY_SHAPE = new RegExp(`^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,${IDEMPOTENCY_KEY_MAX_LENGTH - 2}}[\\x21-\\x7e])?$`);

/** The keys being answered, by store (a process may serve several homes): scope and key -> fingerprint. */
const answering = new WeakMap<IdempotencyStore, Map<string, string>>();

/**
 * `handler`, acting once per caller and Idempotency-Key. `method` and `pattern` name the route: a
 * key used again on another route (or another DAG of the same route) is a mismatch.
 */
export function idempotent(method: string, pattern: string, handler: Handler): Handler {
  return async (request, deps) => {
    const key = idempotencyKey(request.headers);
    if (key === undefined) return handler(request, deps);
    const store = deps.idempotency;
    const scope = callerScope(request.identity);
    const fingerprint = fingerprintOf(method, pattern, request);
    let inFlight = answering.get(store);
    if (!inFlight) answering.set(store, inFlight = new Map());
    const id = `${scope}\u0000${key}`;
    // An answer whose write is still committing is repeated already: the store returns it from the put on.
    const stored = store.get(scope, key, deps.clock.now() - IDEMPOTENCY_WINDOW_MS);
    if (stored) {
      if (stored.fingerprint !== fingerprint) throw mismatch();
      return { status: stored.status, ...(stored.body !== undefined ? { body: stored.body } : {}) };
    }
    const first = inFlight.get(id);
    if (first !== undefined) {
      if (first !== fingerprint) throw mismatch();
      throw new AppError('idempotency_in_progress', `the first request with this ${IDEMPOTENCY_HEADER} is still being answered; repeat it once it has been`);
    }
    inFlight.set(id, fingerprint);
    try {
      const response = await answerOf(handler, request, deps);
      const kept = keptBody(response);
      if (!kept) return response;
      try {
        await store.put(scope, key, { fingerprint, status: response.status, ...kept, storedAtMs: deps.clock.now() });
      } catch (error) {
        // The request acted and its answer stands; only a repeat of it would act again.
        log.warn({ route: pattern, error: errorText(error) }, 'the answer of an idempotent request could not be stored');
      }
      return response;
    } finally {
      inFlight.delete(id);
    }
  };
}

/** The request's key; undefined without the header, 400 when it is not 1 to 255 printable ASCII characters. */
function idempotencyKey(headers: Record<string, string>): string | undefined {
  const value = headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  if (!KEY_SHAPE.test(value)) {
    throw new AppError('bad_request', `the ${IDEMPOTENCY_HEADER} header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`);
  }
  return value;
}

/**
 * Whose keys a key is among: a stored user's (whichever way they signed in), an API key's, the
 * static credentials'; one namespace for all when authentication is off.
 */
function callerScope(identity: Identity): string {
  switch (identity.kind) {
    case 'none': return '';
    case 'apiKey': return `apiKey:${identity.apiKeyId ?? identity.username}`;
    case 'token': return 'token';
    default: return identity.userId !== undefined ? `user:${identity.userId}` : `basic:${identity.username}`;
  }
}

async function answerOf(handler: Handler, request: HttpRequest, deps: Parameters<Handler>[1]): Promise<HttpResponse> {
  try {
    return await handler(request, deps);
  } catch (error) {
    return errorResponse(error);
  }
}

/**
 * What is stored of an answer worth repeating: a success, or a refusal by the route's own checks.
 * A server-side failure (5xx) is not: the key is free and the request may be tried again.
 */
function keptBody(response: HttpResponse): { body?: unknown } | undefined {
  const { status, body } = response;
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 500))) return undefined;
  if (body === undefined) return {};
  if (typeof body === 'string') return undefined;
  if (Buffer.isBuffer(body)) {
    if (!response.headers?.['content-type']?.startsWith('application/json')) return undefined;
    try {
      return { body: JSON.parse(body.toString('utf8')) };
    } catch {
      return undefined;
    }
  }
  return { body };
}

function mismatch(): AppError {
  return new AppError('idempotency_mismatch', `this ${IDEMPOTENCY_HEADER} was used with another route or body; a key names one request`);
}

/** SHA-256 of the route and the body in canonical JSON (keys sorted), so key order and spacing do not count. */
function fingerprintOf(method: string, pattern: string, request: HttpRequest): string {
  const hash = createHash('sha256');
  const params = Object.keys(request.params).sort().map((name) => [name, request.params[name]]);
  hash.update(JSON.stringify([method, pattern, params]));
  hash.update('\n');
  hashCanonical(hash, request.body);
  return hash.digest('hex');
}

class Text {
  constructor(readonly text: string) {}
}

/** Without recursion: a body may nest as deep as JSON.parse allows. */
function hashCanonical(hash: Hash, root: unknown): void {
  const todo: unknown[] = [root];
  while (todo.length > 0) {
    const item = todo.pop();
    if (item instanceof Text) {
      hash.update(item.text);
    } else if (Array.isArray(item)) {
      todo.push(new Text(']'));
      for (let i = item.length - 1; i >= 0; i--) {
        todo.push(item[i]);
        if (i > 0) todo.push(new Text(','));
      }
      todo.push(new Text('['));
    } else if (item !== null && typeof item === 'object') {
      const fields = Object.keys(item).sort();
      todo.push(new Text('}'));
      for (let i = fields.length - 1; i >= 0; i--) {
        todo.push((item as Record<string, unknown>)[fields[i]]);
        todo.push(new Text(`${JSON.stringify(fields[i])}:`));
        if (i > 0) todo.push(new Text(','));
      }
      todo.push(new Text('{'));
    } else {
      // undefined: no body.
      hash.update(JSON.stringify(item) ?? '');
    }
  }
}

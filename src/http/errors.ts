// The only place that maps an error code to an HTTP status, and the error document.
import { AppError, type ErrorCode } from '../core/index.ts';
import type { HttpResponse } from './types.ts';
import { errorText, log } from '../logging/index.ts';

const statusOf: Record<ErrorCode, number> = {
  bad_request: 400,
  not_found: 404,
  forbidden: 403,
  already_exists: 409,
  // 409 on start with singleton; a retry while the run is active answers 400 (statusOverrides).
  already_running: 409,
  max_run_reached: 409,
  not_running: 400,
  internal_error: 500,
  unauthorized: 401,
  bad_gateway: 502,
  remote_node_error: 502,
  payload_too_large: 413,
  // Protocol errors of the node:http carrier (uWS writes its own, see node-server.ts).
  request_timeout: 408,
  headers_too_large: 431,
  method_not_allowed: 405,
  too_many_requests: 429,
  unsupported_media_type: 415,
  insufficient_storage: 507,
  idempotency_mismatch: 422,
  idempotency_in_progress: 409,
};

/** Both challenges: a client may answer either with Basic credentials or with a Bearer token or key. */
export const AUTHENTICATE_CHALLENGE = 'Basic realm="troupe", Bearer realm="troupe"';

/**
 * A browser shows its own password dialog over the page when a script's request (the dashboard's
 * fetch or EventSource) is answered 401 with a Basic challenge; the dashboard has a sign-in page
 * for that. Such a request (Sec-Fetch-Mode other than `navigate`) is challenged for Bearer only;
 * an address opened in the browser's bar keeps the Basic dialog. Only browsers send
 * Sec-Fetch-Site (Node's fetch sends Sec-Fetch-Mode alone), and a page cannot set it.
 */
export function challengeForScripts(headers: Record<string, string>, response: HttpResponse): HttpResponse {
  const mode = headers['sec-fetch-mode'];
  if (response.status !== 401 || headers['sec-fetch-site'] === undefined || mode === undefined || mode === 'navigate' || !response.headers?.['www-authenticate']) return response;
  return { ...response, headers: { ...response.headers, 'www-authenticate': 'Bearer realm="troupe"' } };
}

function errorHeaders(error: AppError, allow: string | undefined): Record<string, string> | undefined {
  if (error.code === 'unauthorized') return { 'www-authenticate': AUTHENTICATE_CHALLENGE };
  if (error.code === 'too_many_requests' && typeof error.details?.retryAfterSec === 'number') return { 'retry-after': String(error.details.retryAfterSec) };
  return allow ? { allow } : undefined;
}

/** Where the specification gives one code two statuses: the route that answers with the other. */
export const statusOverrides = {
  /** POST /dag-runs/{name}/{dagRunId}/retry while the run is active (docs/api.md). */
  retry: { already_running: 400 },
} satisfies Record<string, Partial<Record<ErrorCode, number>>>;

/** The status an error code answers with, on a route that maps some codes otherwise (`overrides`). */
export function statusOfCode(code: ErrorCode, overrides: Partial<Record<ErrorCode, number>> = {}): number {
  return overrides[code] ?? statusOf[code];
}

export function errorResponse(error: unknown, overrides: Partial<Record<ErrorCode, number>> = {}): HttpResponse {
  if (error instanceof AppError) {
    const body: Record<string, unknown> = { code: error.code, message: error.message };
    if (error.details) body.details = error.details;
    const allow = error.code === 'method_not_allowed' && Array.isArray(error.details?.allow) ? (error.details.allow as string[]).join(', ') : undefined;
    const headers = errorHeaders(error, allow);
    return { status: statusOfCode(error.code, overrides), body, ...(headers ? { headers } : {}) };
  }
  // Never a stack trace on the wire; the server log gets the detail.
  // The stack helps whoever debugs; the client gets only the error document.
  log.error({ error: errorText(error), stack: (error as Error)?.stack }, 'unexpected error');
  return { status: 500, body: { code: 'internal_error', message: 'An unexpected error occurred' } };
}

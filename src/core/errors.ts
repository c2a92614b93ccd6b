// The one error type of troupe. Callers branch on `code`; http/errors.ts maps codes to statuses.

export type ErrorCode =
  | 'bad_request'
  | 'not_found'
  | 'forbidden'
  | 'already_exists'
  | 'already_running'
  | 'max_run_reached'
  | 'not_running'
  | 'internal_error'
  | 'unauthorized'
  | 'bad_gateway'
  | 'remote_node_error'
  | 'payload_too_large'
  | 'request_timeout'
  | 'headers_too_large'
  /** Not of the specification: a path served with other methods (405, with Allow). */
  | 'method_not_allowed'
  /** Not of the specification: too many failed sign-ins for a username or from an address (429, with Retry-After). */
  | 'too_many_requests'
  /** Not of the specification: a request body that is not JSON (415): a form or text a browser may send from another site. */
  | 'unsupported_media_type'
  /** Not of the specification: a write the home's file system has no room for (507); `message` says which. */
  | 'insufficient_storage'
  /** Not of the specification: an Idempotency-Key used again with another route or body (422). */
  | 'idempotency_mismatch'
  /** Not of the specification: an Idempotency-Key used again while its first request is being answered (409). */
  | 'idempotency_in_progress';

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

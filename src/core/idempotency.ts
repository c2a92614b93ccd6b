// The answers of idempotent submits, as the HTTP layer keeps them (http/idempotency.ts decides
// which; a store keeps them across restarts). Which requests are still being answered is never stored.

/** How long an answer is repeated for its key: a key used again later acts again. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The longest Idempotency-Key accepted; with the caller's scope it stays far below LMDB's key limit. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export interface StoredAnswer {
  /** SHA-256 (hex) of the request: its method, route, path parameters and body in canonical JSON. */
  fingerprint: string;
  status: number;
  /** The JSON body the client got; absent when it got none. */
  body?: unknown;
  storedAtMs: number;
}

/**
 * Answers by caller scope (who sent the request) and key. An answer is durable when `put` settles;
 * `get` sees it from the call of `put` on. Answers stored before `sinceMs` are not returned.
 */
export interface IdempotencyStore {
  get(scope: string, key: string, sinceMs: number): StoredAnswer | undefined;
  put(scope: string, key: string, answer: StoredAnswer): Promise<void>;
}

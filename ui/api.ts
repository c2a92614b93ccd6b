// Every call of the REST API goes through here, so that every failure becomes an ApiError
// carrying the API's own error document (or a plain account of a network failure).
import type { ErrorDocument } from './types';

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

const base = '/api/v2';

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const text = await call(method, path, 'application/json', body);
  try {
    return (text ? JSON.parse(text) : undefined) as T;
  } catch {
    return undefined as T;
  }
}

/** A GET answered in text (the Prometheus metrics), failing as `api` fails. */
export function apiText(path: string): Promise<string> {
  return call('GET', path, 'text/plain');
}

async function call(method: string, path: string, accept: string, body?: unknown): Promise<string> {
  const headers: Record<string, string> = { Accept: accept };
  // The server refuses a changing request signed in by cookie unless it is labelled JSON.
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(base + path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (cause) {
    throw new ApiError(0, 'network_error', `The server cannot be reached (${(cause as Error).message}).`);
  }
  const text = await response.text();
  if (response.ok) return text;
  let doc: Partial<ErrorDocument> | undefined;
  try {
    doc = JSON.parse(text) as Partial<ErrorDocument>;
  } catch {
    // Not the error document: the status says what happened.
  }
  throw new ApiError(
    response.status,
    typeof doc?.code === 'string' ? doc.code : `http_${response.status}`,
    typeof doc?.message === 'string' ? doc.message : `${response.status} ${response.statusText}`.trim(),
  );
}

/** Encodes each value as one path segment. */
export function path(strings: TemplateStringsArray, ...values: string[]): string {
  return strings.reduce((out, part, i) => out + part + (i < values.length ? encodeURIComponent(values[i]) : ''), '');
}

export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

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
  const headers: Record<string, string> = { Accept: 'application/json' };
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
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!response.ok) {
    const doc = data as Partial<ErrorDocument> | undefined;
    throw new ApiError(
      response.status,
      typeof doc?.code === 'string' ? doc.code : `http_${response.status}`,
      typeof doc?.message === 'string' ? doc.message : `${response.status} ${response.statusText}`.trim(),
    );
  }
  return data as T;
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

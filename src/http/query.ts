// Query-string parsing with the spec's errors: integers that are not integers are 400, never ignored.
import { AppError } from '../core/index.ts';

export function intParam(query: URLSearchParams, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?[0-9]+$/.test(raw)) throw new AppError('bad_request', `${name} must be an integer`);
  const value = Number(raw);
  if (value < min || value > max) throw new AppError('bad_request', `${name} must be between ${min} and ${max}`);
  return value;
}

export function stringParam(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  return raw === null || raw === '' ? undefined : raw;
}

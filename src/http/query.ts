// Query-string parameters, each declared once: the handler reads it through its declaration and the
// OpenAPI document describes it from the same one. Values that break the declaration are 400, never
// ignored.
import type { TSchema } from 'typebox';
import { AppError } from '../core/index.ts';
import type { TypeBuilder } from './schemas.ts';

export interface QueryParam<T> {
  name: string;
  description: string;
  required?: boolean;
  /** The parameter's schema, built when the OpenAPI document is. */
  schema(Type: TypeBuilder): TSchema;
  /** The value of the query string; undefined when absent or empty. */
  read(query: URLSearchParams): T | undefined;
}

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

export function intQuery(name: string, description: string, min: number, max?: number): QueryParam<number> {
  return {
    name,
    description,
    schema: (Type) => Type.Integer({ minimum: min, ...(max !== undefined ? { maximum: max } : {}) }),
    read: (query) => intParam(query, name, min, max),
  };
}

export function stringQuery(name: string, description: string, options: { required?: boolean } = {}): QueryParam<string> {
  return {
    name,
    description,
    ...(options.required ? { required: true } : {}),
    schema: (Type) => Type.String(options.required ? { minLength: 1 } : {}),
    read: (query) => {
      const value = stringParam(query, name);
      if (value === undefined && options.required) throw new AppError('bad_request', `query parameter ${name} is required`);
      return value;
    },
  };
}

export function enumQuery<const T extends string>(name: string, description: string, values: readonly T[]): QueryParam<T> {
  return {
    name,
    description,
    schema: (Type) => Type.Enum([...values]),
    read: (query) => {
      const value = stringParam(query, name);
      if (value === undefined) return undefined;
      if (!(values as readonly string[]).includes(value)) throw new AppError('bad_request', `${name} must be ${values.join(' or ')}`);
      return value as T;
    },
  };
}

// How an `auth.oidc` map is read, for settings.ts and role-mapping-settings.ts alike: a
// TROUPE_AUTH_OIDC_* variable (when not empty) wins over the file's camelCase key, then its snake_case spelling.
import type { AppError } from '../../core/index.ts';

export type Fail = (problem: string) => AppError;

/** config.yaml key -> its snake_case spelling, its variable's suffix. */
export type KeySpellings<K extends string> = Record<K, readonly [snake: string, variable: string]>;

/** The map `section` (empty when absent), copied; `notAMap` is the problem told for anything else. */
export function mapOf(section: unknown, notAMap: string, fail: Fail): Record<string, unknown> {
  if (section !== undefined && section !== null && (typeof section !== 'object' || Array.isArray(section))) throw fail(notAMap);
  return { ...(section as Record<string, unknown> | null | undefined) };
}

/** The first key of `file` that is neither in `keys`, nor a snake_case spelling, nor one of `also`. */
export function unknownKey<K extends string>(file: Record<string, unknown>, keys: KeySpellings<K>, also: readonly string[] = []): string | undefined {
  const known = new Set<string>([...Object.entries<readonly [string, string]>(keys).flatMap(([key, [snake]]) => [key, snake]), ...also]);
  return Object.keys(file).find((key) => !known.has(key));
}

export function settingReader<K extends string>(file: Record<string, unknown>, env: Record<string, string | undefined>, keys: KeySpellings<K>): (key: K) => unknown {
  return (key) => {
    const fromEnv = env[`TROUPE_AUTH_OIDC_${keys[key][1]}`];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    return file[key] ?? file[keys[key][0]];
  };
}

/** A string, trimmed; undefined when absent or empty. `name` is the key the problem names. */
export function text(raw: unknown, name: string, fail: Fail): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') throw fail(`${name} must be a string`);
  return raw.trim();
}

/** A boolean, or the text a variable gives it ('true', '1', 'false', '0'); undefined when absent. */
export function flag(raw: unknown, name: string, fail: Fail): boolean | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw fail(`${name} must be true or false, not "${String(raw)}"`);
}

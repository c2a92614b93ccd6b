// Reading an executor's config values as Dagu's decoder (mapstructure, weakly typed) reads them, so
// that a Dagu file's `silent: "true"`, `timeout: "5"` or `json: 1` means what it means there.
// Each reader returns the value or a message saying what was expected. The definition checks a
// step's config with them as it loads; the executors read it with them as the step runs.
import { setOwn } from './records.ts';

export type Weak<T> = { ok: true; value: T } | { ok: false; message: string };

/** Go's strconv.ParseBool forms; an empty string is false. Numbers are true unless 0. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False', '']);

export function weakBoolean(value: unknown, fallback = false): Weak<boolean> {
  if (value === undefined || value === null) return { ok: true, value: fallback };
  if (typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number') return { ok: true, value: value !== 0 };
  if (typeof value === 'string' && TRUE.has(value)) return { ok: true, value: true };
  if (typeof value === 'string' && FALSE.has(value)) return { ok: true, value: false };
  return { ok: false, message: `must be true or false (got ${JSON.stringify(value)})` };
}

/** An integer; a number with a fraction is cut to its integer part, a boolean is 1 or 0, "" is 0. */
export function weakInteger(value: unknown, fallback = 0): Weak<number> {
  if (value === undefined || value === null) return { ok: true, value: fallback };
  if (typeof value === 'boolean') return { ok: true, value: value ? 1 : 0 };
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value: Math.trunc(value) };
  if (typeof value === 'string' && value === '') return { ok: true, value: 0 };
  if (typeof value === 'string' && /^[+-]?[0-9]+$/.test(value)) return { ok: true, value: Number(value) };
  return { ok: false, message: `must be an integer (got ${JSON.stringify(value)})` };
}

/** A string; numbers are written as text, booleans as "1" and "0" (as Dagu's decoder writes them). */
export function weakString(value: unknown): Weak<string> {
  if (value === undefined || value === null) return { ok: true, value: '' };
  if (typeof value === 'string') return { ok: true, value };
  if (typeof value === 'number') return { ok: true, value: String(value) };
  if (typeof value === 'boolean') return { ok: true, value: value ? '1' : '0' };
  return { ok: false, message: 'must be a string' };
}

export function weakStringMap(value: unknown): Weak<Record<string, string>> {
  if (value === undefined || value === null) return { ok: true, value: {} };
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'must be a map of strings' };
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    const text = weakString(item);
    if (!text.ok) return { ok: false, message: `${key}: must be a string` };
    setOwn(out, key, text.value);
  }
  return { ok: true, value: out };
}

/** A list of strings; a single string is a list of one. */
export function weakStringList(value: unknown): Weak<string[]> {
  if (value === undefined || value === null) return { ok: true, value: [] };
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of items) {
    const text = weakString(item);
    if (!text.ok) return { ok: false, message: 'must be a string or a list of strings' };
    out.push(text.value);
  }
  return { ok: true, value: out };
}

/**
 * The config with each key spelt as `known` spells it: Dagu's decoder matches a key to a field
 * whatever its case (`skiptlsverify`, `JSON`).
 */
export function canonicalKeys(config: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const name = known.includes(key) ? key : known.find((candidate) => candidate.toLowerCase() === key.toLowerCase()) ?? key;
    // An exact spelling wins over another case of the same key.
    if (name !== key && Object.hasOwn(config, name)) continue;
    setOwn(out, name, value);
  }
  return out;
}

// Typed access to a YAML map that records a located issue instead of throwing.
import { setOwn } from '../core/index.ts';
import type { Path, SpecIssue } from './issues.ts';
import { pathText } from './issues.ts';
import type { YamlDocument } from './yaml-source.ts';
import { closestKey } from './keys.ts';

export class FieldReader {
  readonly issues: SpecIssue[] = [];
  constructor(private readonly doc: YamlDocument) {}

  report(path: Path, message: string): void {
    this.issues.push({ path: pathText(path), line: this.doc.lineOf(path), message });
  }

  string(map: Record<string, unknown>, key: string, path: Path): string | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    this.report([...path, key], 'must be a string');
    return undefined;
  }

  integer(map: Record<string, unknown>, key: string, path: Path, min = 0): number | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    const number = typeof value === 'string' && /^-?[0-9]+$/.test(value.trim()) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isInteger(number)) {
      this.report([...path, key], 'must be an integer');
      return undefined;
    }
    if (number < min) {
      this.report([...path, key], `must be at least ${min}`);
      return undefined;
    }
    return number;
  }

  boolean(map: Record<string, unknown>, key: string, path: Path): boolean | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    this.report([...path, key], 'must be true or false');
    return undefined;
  }

  /** An integer or a list of integers. */
  integerList(map: Record<string, unknown>, key: string, path: Path): number[] | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    const items = Array.isArray(value) ? value : [value];
    const out: number[] = [];
    items.forEach((item, index) => {
      const number = typeof item === 'string' && /^-?[0-9]+$/.test(item.trim()) ? Number(item) : item;
      if (typeof number === 'number' && Number.isInteger(number)) out.push(number);
      else this.report(Array.isArray(value) ? [...path, key, index] : [...path, key], 'must be an integer');
    });
    return out;
  }

  /** One of `allowed`, or the default when absent. */
  oneOf<T extends string>(map: Record<string, unknown>, key: string, path: Path, allowed: readonly T[], fallback: T): T {
    const value = this.string(map, key, path);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.report([...path, key], `must be one of ${allowed.map((item) => `"${item}"`).join(', ')}`);
    return fallback;
  }

  /** A map of strings (numbers and booleans are written as text). */
  stringMap(map: Record<string, unknown>, key: string, path: Path): Record<string, string> | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    if (!isPlainMap(value)) {
      this.report([...path, key], 'must be a map of strings');
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [name, item] of Object.entries(value)) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') setOwn(out, name, String(item));
      else this.report([...path, key, name], 'must be a string');
    }
    return out;
  }

  /** A map, or undefined (reported) when the value is something else. */
  map(map: Record<string, unknown>, key: string, path: Path, what: string): Record<string, unknown> | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    if (isPlainMap(value)) return value;
    this.report([...path, key], `must be a map${what ? ` with ${what}` : ''}`);
    return undefined;
  }

  /** Reports the keys of `map` that are not in `allowed`, suggesting the closest one. */
  knownKeys(map: Record<string, unknown>, allowed: readonly string[], path: Path): void {
    for (const key of Object.keys(map)) {
      if (allowed.includes(key)) continue;
      const hint = closestKey(key, allowed);
      this.report([...path, key], `unknown field "${key}"${hint ? `; did you mean "${hint}"?` : ''}`);
    }
  }

  /** A string or a list of strings. */
  stringList(map: Record<string, unknown>, key: string, path: Path, splitComma = false): string[] | undefined {
    const value = map[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') {
      const parts = splitComma ? value.split(',') : [value];
      return parts.map((part) => part.trim()).filter((part) => part.length > 0);
    }
    if (Array.isArray(value)) {
      const out: string[] = [];
      value.forEach((item, index) => {
        if (typeof item === 'string' || typeof item === 'number') out.push(String(item));
        else this.report([...path, key, index], 'must be a string');
      });
      return out;
    }
    this.report([...path, key], 'must be a string or a list of strings');
    return undefined;
  }

  /** env: a list of single-key maps (or KEY=value strings), or a map. */
  env(value: unknown, path: Path): Array<[string, string]> {
    if (value === undefined || value === null) return [];
    const entries: Array<[string, string]> = [];
    const add = (key: string, raw: unknown, at: Path) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) this.report(at, `invalid variable name "${key}"`);
      else entries.push([key, raw === null || raw === undefined ? '' : String(raw)]);
    };
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (typeof item === 'string' && item.includes('=')) {
          const at = item.indexOf('=');
          add(item.slice(0, at), item.slice(at + 1), [...path, index]);
        } else if (isPlainMap(item) && Object.keys(item).length === 1) {
          const [key, raw] = Object.entries(item)[0];
          add(key, raw, [...path, index]);
        } else {
          this.report([...path, index], 'must be a single-key map (KEY: value)');
        }
      });
    } else if (isPlainMap(value)) {
      for (const [key, raw] of Object.entries(value)) add(key, raw, [...path, key]);
    } else {
      this.report(path, 'must be a list of KEY: value maps');
    }
    return entries;
  }
}

export function isPlainMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The object without its undefined properties, so that models compare and print cleanly. A copy,
 * not `delete`: an object that loses properties turns slow for every later read (a 1 MiB
 * definition's steps spent a quarter of their parse there).
 */
export function dropUndefined<T extends object>(value: T): T {
  const keys = Object.keys(value) as Array<keyof T>;
  if (keys.every((key) => value[key] !== undefined)) return value;
  const out = {} as T;
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}

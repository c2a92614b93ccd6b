// Conditions and step policies (definition format: preconditions, continueOn, retryPolicy, repeatPolicy): read, validated and normalised.
import type { Condition, ContinueOn, RepeatPolicy, RetryPolicy } from '../core/index.ts';
import { dropUndefined, isPlainMap, type FieldReader } from './field-reader.ts';
import type { Path } from './issues.ts';
import { checkRegExp } from './services.ts';

const CONDITION_KEYS = ['condition', 'expected', 'command', 'error', 'negate'] as const;
const CONTINUE_ON_KEYS = ['failure', 'skipped', 'exitCode', 'output', 'markSuccess'] as const;
const RETRY_KEYS = ['limit', 'intervalSec', 'backoff', 'maxIntervalSec', 'exitCode', 'exitCodes'] as const;
const REPEAT_KEYS = ['repeat', 'intervalSec', 'backoff', 'maxIntervalSec', 'limit', 'condition', 'expected', 'exitCode', 'exitCodes'] as const;

/** A plain command string, or a map; a single item may stand without the list. */
export function readConditions(reader: FieldReader, value: unknown, at: Path): Condition[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  const conditions: Condition[] = [];
  items.forEach((item, index) => {
    const path = Array.isArray(value) ? [...at, index] : at;
    if (typeof item === 'string') {
      if (item.trim() === '') reader.report(path, 'must not be empty');
      else conditions.push({ command: item, negate: false });
      return;
    }
    if (!isPlainMap(item)) {
      reader.report(path, 'must be a command or a map with condition, expected, command, error, negate');
      return;
    }
    reader.knownKeys(item, CONDITION_KEYS, path);
    const condition: Condition = {
      condition: reader.string(item, 'condition', path),
      expected: reader.string(item, 'expected', path),
      command: reader.string(item, 'command', path),
      error: reader.string(item, 'error', path),
      negate: reader.boolean(item, 'negate', path) ?? false,
    };
    if (condition.condition === undefined && condition.command === undefined) reader.report(path, 'needs a condition or a command');
    if (condition.condition !== undefined && condition.command !== undefined) reader.report(path, 'use condition or command, not both');
    if (condition.expected !== undefined && condition.condition === undefined) reader.report([...path, 'expected'], 'needs a condition to compare');
    checkPattern(reader, condition.expected, [...path, 'expected']);
    conditions.push(dropUndefined(condition));
  });
  return conditions;
}

/** The object form, or the shorthands `skipped` and `failed`. */
export function readContinueOn(reader: FieldReader, value: unknown, at: Path): ContinueOn | undefined {
  if (value === undefined || value === null) return undefined;
  const none: ContinueOn = { failure: false, skipped: false, exitCode: [], output: [], markSuccess: false };
  if (typeof value === 'string') {
    if (value === 'skipped') return { ...none, skipped: true };
    if (value === 'failed' || value === 'failure') return { ...none, failure: true };
    reader.report(at, 'must be "skipped", "failed" or a map');
    return undefined;
  }
  if (!isPlainMap(value)) {
    reader.report(at, 'must be "skipped", "failed" or a map');
    return undefined;
  }
  reader.knownKeys(value, CONTINUE_ON_KEYS, at);
  const output = reader.stringList(value, 'output', at) ?? [];
  output.forEach((pattern, index) => checkPattern(reader, pattern, Array.isArray(value.output) ? [...at, 'output', index] : [...at, 'output']));
  return {
    failure: reader.boolean(value, 'failure', at) ?? false,
    skipped: reader.boolean(value, 'skipped', at) ?? false,
    exitCode: reader.integerList(value, 'exitCode', at) ?? [],
    output,
    markSuccess: reader.boolean(value, 'markSuccess', at) ?? false,
  };
}

export function readRetryPolicy(reader: FieldReader, value: unknown, at: Path): RetryPolicy | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainMap(value)) {
    reader.report(at, 'must be a map with limit, intervalSec, backoff, maxIntervalSec, exitCode');
    return undefined;
  }
  reader.knownKeys(value, RETRY_KEYS, at);
  return dropUndefined({
    limit: reader.integer(value, 'limit', at) ?? 0,
    intervalSec: reader.integer(value, 'intervalSec', at) ?? 0,
    backoff: readBackoff(reader, value, at),
    maxIntervalSec: reader.integer(value, 'maxIntervalSec', at),
    exitCode: readExitCodes(reader, value, at),
  });
}

export function readRepeatPolicy(reader: FieldReader, value: unknown, at: Path): RepeatPolicy | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainMap(value)) {
    reader.report(at, 'must be a map with repeat, condition, expected, exitCode, limit, intervalSec, backoff, maxIntervalSec');
    return undefined;
  }
  reader.knownKeys(value, REPEAT_KEYS, at);
  const condition = reader.string(value, 'condition', at);
  const expected = reader.string(value, 'expected', at);
  const exitCode = readExitCodes(reader, value, at);
  if (expected !== undefined && condition === undefined) reader.report([...at, 'expected'], 'needs a condition to compare');
  checkPattern(reader, expected, [...at, 'expected']);
  const mode = readRepeatMode(reader, value.repeat, { condition, expected, exitCode }, [...at, 'repeat']);
  if (!mode) return undefined;
  const limit = reader.integer(value, 'limit', at, 1);
  return dropUndefined({
    repeat: mode,
    condition,
    expected,
    exitCode,
    limit,
    intervalSec: reader.integer(value, 'intervalSec', at) ?? 0,
    backoff: readBackoff(reader, value, at),
    maxIntervalSec: reader.integer(value, 'maxIntervalSec', at),
  });
}

/**
 * `while`, `until`, or the legacy `true` (repeat while nothing stops it). Without `repeat` the mode
 * follows the other fields, as in Dagu: an expected value means `until`, otherwise `while`.
 */
function readRepeatMode(
  reader: FieldReader,
  value: unknown,
  policy: { condition?: string; expected?: string; exitCode: number[] },
  at: Path,
): RepeatPolicy['repeat'] | undefined {
  const hasTest = policy.condition !== undefined || policy.exitCode.length > 0;
  if (value === undefined || value === null) {
    if (!hasTest) {
      reader.report(at.slice(0, -1), 'needs repeat, a condition or exitCode');
      return undefined;
    }
    return policy.expected !== undefined ? 'until' : 'while';
  }
  if (value === true) return 'while';
  if (value === 'while' || value === 'until') {
    if (value === 'until' && !hasTest) {
      reader.report(at, '"until" needs a condition or exitCode');
      return undefined;
    }
    return value;
  }
  reader.report(at, 'must be "while", "until" or true');
  return undefined;
}

/** `true` is 2.0; a number must be greater than 1.0; `false` or absent: a constant interval. */
function readBackoff(reader: FieldReader, map: Record<string, unknown>, at: Path): number | undefined {
  const value = map.backoff;
  if (value === undefined || value === null || value === false) return undefined;
  if (value === true) return 2;
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || Number.isNaN(number)) {
    reader.report([...at, 'backoff'], 'must be true or a number greater than 1.0');
    return undefined;
  }
  if (number <= 1) {
    reader.report([...at, 'backoff'], 'must be greater than 1.0');
    return undefined;
  }
  return number;
}

/** `exitCode`, with `exitCodes` accepted as an alias (one example of the spec spells it so). */
function readExitCodes(reader: FieldReader, map: Record<string, unknown>, at: Path): number[] {
  if (map.exitCode !== undefined && map.exitCodes !== undefined) reader.report([...at, 'exitCodes'], 'use exitCode or exitCodes, not both');
  return reader.integerList(map, map.exitCode !== undefined ? 'exitCode' : 'exitCodes', at) ?? [];
}

/** A `re:` value must be a valid regular expression. */
function checkPattern(reader: FieldReader, value: string | undefined, at: Path): void {
  if (value !== undefined && value.startsWith('re:')) checkRegExp(reader, value.slice(3), at);
}

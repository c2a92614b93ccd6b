// What the fuzz suite sends: every route the server registers (read from its route table, so
// a new route is fuzzed without editing this file), hostile names and path segments, bodies and queries.
import fc from 'fast-check';
import { apiRouter } from '../../src/http/index.ts';
import type { FuzzRequest } from './harness.ts';

export const PREFIX = '/api/v2';

export interface Route {
  method: string;
  pattern: string;
}

/** The routes as the API registers them: the route table the server itself serves. */
export function registeredRoutes(): Route[] {
  return apiRouter().entries().map(({ method, pattern }) => ({ method, pattern }));
}

/** HEAD is apart: uWS sends a body with it on main, which breaks the client's framing. */
export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'get', 'X-FUZZ'];

/**
 * Keys every plain object inherits: a name used as a key of `{}` finds these.
 * Kept apart from the other hostile names so that their group can be told apart on main.
 */
export const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'propertyIsEnumerable', 'toLocaleString'];

/**
 * Path segments as they go on the wire (already encoded where they must be). Request lines stay
 * under 4 KiB: uWS answers longer ones itself (431, HTML); the raw protocol groups send those.
 */
export const HOSTILE_SEGMENTS = [
  '..', '.', '%2e%2e', '%2E%2E', '.%2e', '%2e', '..%2f..%2fetc', '..%2F..%2F..%2Ftmp', '%2fetc%2fpasswd', '%5c..%5c..',
  '%00', 'a%00b', '%00.yaml', 'x.yaml', 'x.yml', '%', '%zz', '%e2%82', '%c0%ae%c0%ae', '%ff%fe',
  'latest', 'LATEST', 'null', 'undefined', 'NaN', '-1', '0', '1e309', 'true', '[]', '%7B%7D',
  '%E2%80%AE', '%F0%9F%98%80', '%E6%97%A5%E6%9C%AC', 'a%20b', '%0d%0aSet-Cookie:x', '%09', '~', '~root', '$HOME', '%24%7BHOME%7D',
  '-', '_', '.hidden', 'a'.repeat(41), 'a'.repeat(300), 'b'.repeat(3000), 'CON', 'nul',
];

/** Names for JSON bodies: anything a string can hold. */
const HOSTILE_NAMES = [
  '', ' ', '..', '.', '../x', '/etc/passwd', 'a/b', 'a\\b', 'a\u0000b', '\u0000', 'latest', 'x.yaml', 'a'.repeat(40), 'a'.repeat(41),
  'a'.repeat(10_000), '日本語', '\u202e', '😀', 'a b', '-', '.hidden', 'a\nb', '${HOME}', '`id`', '$(id)',
];

/** A segment generated afresh: unicode, control characters and lengths no list foresees. */
export const generatedSegment = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('.', '%', '2', 'e', '/', 'a', '0'), maxLength: 12 }),
).map((text) => encodeURIComponent(text).replace(/%25(2e|2E|2f|2F|00)/g, '%$1'));

/** `pattern` with each `:param` taken from `values`, or from `fallback` when not given. */
export function fillPath(pattern: string, values: Record<string, string>): string {
  return PREFIX + pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => values[name] ?? 'none');
}

export function paramsOf(pattern: string): string[] {
  return [...pattern.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1]);
}

/** The fields each body schema names (src/http/schemas.ts), and values of every other type. */
const BODY_FIELDS = ['name', 'spec', 'params', 'dagRunId', 'dagName', 'singleton', 'newFileName', 'suspend', 'status', 'stepName'];

const wrongValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, true, 0, -1, 1.5, 1e308, '', [], {}, 'latest', '__proto__', 'x'.repeat(2000)),
  fc.constantFrom(...HOSTILE_NAMES),
  fc.integer({ min: -10, max: 10 }),
);

/** Bodies that are JSON but of the wrong shape, then bytes that are not JSON at all. */
export const jsonBody: fc.Arbitrary<string> = fc.oneof(
  fc.dictionary(fc.constantFrom(...BODY_FIELDS, '__proto__', 'constructor', 'extra'), wrongValue, { maxKeys: 4 }).map((value) => JSON.stringify(value)),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? 'null'),
  fc.constantFrom('{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '{"name":"a","name":"b"}'),
);

/** Parameter texts (JSON object, JSON array, KEY=value forms; docs/api.md) with hostile keys and values. */
export const PARAMS = ['{"__proto__":{"x":1}}', '{"constructor":"x"}', '{"A":"a\\u0000b"}', '{"A\\u0000":"1"}', '{"":"1"}', '{"A":{"b":[1]}}', '[1,[2]]', '[]', '{}',
  'A=1 B="2', 'A=', '=1', '"', '__proto__=1', 'PATH=/nowhere', 'A=`id`', `A=${'x'.repeat(100_000)}`, '{"A":1e999}', 'x'.repeat(2000), '\u0000',
  `{"A":${'['.repeat(20_000)}${']'.repeat(20_000)}}`, `${'['.repeat(20_000)}${']'.repeat(20_000)}`];

/** Param names a run must refuse (docs/api.md, Params): those that steer a shell, the loader or an interpreter, troupe's and Dagu's own. */
const RESERVED_PARAM_NAMES = ['PATH', 'HOME', 'IFS', 'ENV', 'BASH_ENV', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND', 'CDPATH', 'GLOBIGNORE',
  'LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'NODE_OPTIONS', 'NODE_PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PERL5OPT', 'PERL5LIB',
  'RUBYOPT', 'JAVA_TOOL_OPTIONS', 'GIT_SSH_COMMAND', 'SHELL', 'TROUPE_HOME', 'DAG_RUN_ID', 'DAG_NAME', 'DAGU_HOME'];
const RESERVED_PARAM_PREFIXES = ['BASH_FUNC_', 'BASH_', 'LD_', 'DYLD_', 'PYTHON', 'NODE_', 'PERL', 'GIT_', 'TROUPE_', 'DAG_', 'DAGU_', 'npm_config_'];

/** A reserved name: one of the list, or a reserved family's prefix with any name characters after it. */
const reservedParamName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...RESERVED_PARAM_NAMES),
  fc.tuple(fc.constantFrom(...RESERVED_PARAM_PREFIXES), fc.stringMatching(/^[A-Za-z0-9_]{0,12}$/)).map(([prefix, rest]) => prefix + rest),
);

/** A name that is not a variable name (and not a number, which keys a positional param). */
const nonVariableName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('1abc', 'a-b', 'a.b', 'BASH_FUNC_date%%', 'a b', '', '\u0000', 'é', 'A=B', '$X', '-x'),
  fc.string({ minLength: 1, maxLength: 16 }),
).filter((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !/^[0-9]+$/.test(name));

/** Params texts, in each request form, with at least one refused name among accepted ones. */
export const refusedParams: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.array(fc.oneof(reservedParamName, nonVariableName), { minLength: 1, maxLength: 4 }), fc.string({ maxLength: 20 }))
    .map(([names, value]) => JSON.stringify(Object.fromEntries([['OK', 'fine'], ...names.map((name) => [name, value])]))),
  fc.tuple(fc.array(reservedParamName, { minLength: 1, maxLength: 4 }), fc.constantFrom('x', '/tmp/x', '() { id; }', '$(id)', ''))
    .map(([names, value]) => JSON.stringify(['OK=fine', ...names.map((name) => `${name}=${value}`), 'positional'])),
  fc.tuple(fc.array(reservedParamName, { minLength: 1, maxLength: 4 }), fc.constantFrom('x', '/tmp/x', '"() { id; }"', '\'$(id)\''))
    .map(([names, value]) => ['OK=fine', ...names.map((name) => `${name}=${value}`), 'positional'].join(' ')),
);

/** Bodies of the right shape whose values are the attack: they reach the engine, not only the schema. */
export const shapedBody: fc.Arbitrary<string> = fc.record({
  params: fc.constantFrom(...PARAMS),
  dagRunId: fc.oneof(fc.constantFrom(...HOSTILE_NAMES), fc.constantFrom('r1', 'a'.repeat(128), 'a'.repeat(129), '0', 'A.b_c-d')),
  dagName: fc.constantFrom(...HOSTILE_NAMES, 'fx', 'other'),
  singleton: fc.boolean(),
  stepName: fc.constantFrom('a', 'b', 'zz', '', '__proto__', 'a'.repeat(5000)),
  status: fc.integer({ min: -2, max: 8 }),
  newFileName: fc.constantFrom(...HOSTILE_NAMES, 'fx2'),
  suspend: fc.boolean(),
}, { requiredKeys: [] }).map((body) => JSON.stringify(body));

export const invalidBody: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom('{', '{"a":', 'nul', '[1,]', "{'a':1}", '\u0000', '\ufeff{}', '{"a":1}x', '1 2', '"\\ud800"', '{"a":"\\u0000"}', 'NaN', 'Infinity', '--'),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
);

/** Bodies whose size or depth is the attack; each costs the server real work, so there are few. */
export function heavyBodies(): string[] {
  return [
    `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
    `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
    `${'['.repeat(200_000)}`,
    JSON.stringify({ name: 'x', spec: 'x'.repeat(900_000) }),
    JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    JSON.stringify(Array.from({ length: 50_000 }, (_, i) => i)),
    JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))),
  ];
}

/** Query strings: the parameters the routes read, with values of every kind, repeated or malformed. */
const QUERY_KEYS = ['page', 'perPage', 'name', 'tag', 'sort', 'order', 'q', 'status', 'fromDate', 'toDate', 'dagRunId', 'tail', 'head', 'offset', 'limit', 'stream', 'remoteNode', '__proto__', 'constructor'];
const QUERY_VALUES = ['', '0', '-1', '1', '1.5', '1e3', '9007199254740993', '99999999999999999999', 'abc', 'NaN', 'true', '%00', '%', '%zz', 'desc', 'nextRun', 'stderr', 'latest', '..', '%2e%2e', encodeURIComponent('\u202e'), 'x'.repeat(600)];

export const queryString: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), fc.oneof(fc.constantFrom(...QUERY_VALUES), fc.integer().map(String))), { minLength: 1, maxLength: 5 })
    .map((pairs) => pairs.map(([key, value]) => `${key}=${value}`).join('&')),
  fc.constantFrom('&&&', '=', '==', 'a', '?', '%', 'page', 'page[]=1', 'status=1&status=2', ';', '#'),
);

export function request(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): FuzzRequest {
  return { method, path, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) };
}

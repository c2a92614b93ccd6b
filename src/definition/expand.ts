// Variable references (definition format: variable references) in commands, scripts and env values:
//   $NAME ${NAME}          a param, env variable, secret or output; $1 ${1} positional params
//   ${NAME:offset:length}  a slice (length optional)
//   ${NAME:-fallback}      the fallback when NAME is unset or empty
//   ${VAR.path.to.field}   a field of VAR's JSON value (array items by index: ${VAR.items.0})
//   ${id.exitCode} ${id.stdout} ${id.stderr}  of the step with that id (the log files' paths)
// Unknown names are left as written, for the shell to expand; so is ${VAR.path} when VAR is not
// JSON, while a path of a JSON value with nothing at it reads `<nil>`, as in Dagu. Shell code
// (expandShellCode) follows Dagu's quote rules too. Backticks are not handled here: the runtime runs
// them as processes.
import { ownValue, setOwn } from '../core/index.ts';

/** What a reference can name. */
export interface ExpandScope {
  get(name: string): string | undefined;
  /** Steps by id, for ${id.exitCode}, ${id.stdout}, ${id.stderr}. */
  step?(id: string): { exitCode?: number; stdout: string; stderr: string } | undefined;
  /**
   * What enters the text instead of a resolved reference (`reference` as written, `at` its offset in
   * the text); undefined: its value, as the reference's place in the text writes it.
   */
  write?(reference: string, value: string, at: number): string | undefined;
}

/** How a value is written between double quotes: what the quotes' language would read specially. */
export type DoubleQuoteEscape = (value: string) => string;

/** For a POSIX shell's double-quoted string: the value comes out exactly as it is. */
export const escapeForShell: DoubleQuoteEscape = (value) => value.replace(/[\\"$`]/g, '\\$&');

const reference = /\$\{([^{}]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/g;
const plainName = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+)$/;
/** ${VAR.path} or ${id.exitCode}: the name, then the fields. */
const pathReference = /^([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+)+)$/;

/** A JSON path with nothing at it, as Dagu writes it (Go's nil) rather than leave it for the shell to reject. */
const NOTHING = '<nil>';

type Scope = ExpandScope | ((name: string) => string | undefined);

export function expandVariables(text: string, scope: Scope): string {
  return expand(text, scope);
}

/**
 * Shell code (a command, a script): references are written as Dagu 1.30.2 writes them. One with a
 * single quote directly before or after it stays as written (`'$1'`, `'${X}'`, `'${X:0:2}'`),
 * except step results and JSON paths (`'${id.exitCode}'`, `'${X.path}'`); a braced one
 * directly between double quotes gets its value escaped for them (`"${CONFIG}"`), so the quotes of
 * a JSON value survive; any other is inserted as it is.
 */
export function expandShellCode(text: string, scope: Scope, escape: DoubleQuoteEscape = escapeForShell): string {
  return expand(text, scope, escape);
}

function expand(text: string, scope: Scope, escape?: DoubleQuoteEscape): string {
  if (!text.includes('$')) return text;
  const resolved: ExpandScope = typeof scope === 'function' ? { get: scope } : scope;
  return text.replace(reference, (whole: string, braced: string | undefined, bare: string | undefined, at: number) => {
    const [before, after] = [text[at - 1], text[at + whole.length]];
    // Dagu resolves step results and JSON paths apart from the rest, single quotes or not.
    if (escape && (before === "'" || after === "'") && !(braced !== undefined && pathReference.test(braced))) return whole;
    const value = bare !== undefined ? resolved.get(bare) : resolveBraced(braced!, resolved);
    if (value === undefined) return whole;
    const written = resolved.write?.(whole, value, at);
    if (written !== undefined) return written;
    return escape && braced !== undefined && before === '"' && after === '"' ? escape(value) : value;
  });
}

function resolveBraced(inner: string, scope: ExpandScope): string | undefined {
  if (plainName.test(inner)) return scope.get(inner);
  // ${NAME:-fallback}
  const fallback = /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+):-(.*)$/s.exec(inner);
  if (fallback) {
    const value = scope.get(fallback[1]);
    // The fallback's value is the reference's value: it is written as a whole, never in parts.
    return value === undefined || value === '' ? expandVariables(fallback[2], { ...scope, write: undefined }) : value;
  }
  // ${NAME:offset} and ${NAME:offset:length}; ${id.stdout:offset...}, a step's result, as Dagu slices it
  const slice = /^([A-Za-z_][A-Za-z0-9_]*(?:\.(?:exitCode|stdout|stderr))?|[0-9]+):(-?[0-9]+)(?::([0-9]+))?$/.exec(inner);
  if (slice) {
    const value = slice[1].includes('.') ? resolveBraced(slice[1], scope) : scope.get(slice[1]);
    if (value === undefined) return undefined;
    const offset = Number(slice[2]);
    const start = offset < 0 ? Math.max(0, value.length + offset) : Math.min(offset, value.length);
    return slice[3] === undefined ? value.slice(start) : value.slice(start, start + Number(slice[3]));
  }
  // ${VAR.path} or ${id.exitCode|stdout|stderr}
  const path = pathReference.exec(inner);
  if (path) {
    const [head, fields] = [path[1], path[2].slice(1).split('.')];
    const step = fields.length === 1 ? scope.step?.(head) : undefined;
    if (step && (fields[0] === 'exitCode' || fields[0] === 'stdout' || fields[0] === 'stderr')) {
      const value = step[fields[0]];
      return value === undefined ? undefined : String(value);
    }
    const json = scope.get(head);
    return json === undefined ? undefined : jsonField(json, fields);
  }
  return undefined;
}

/** The field at `path` of a JSON text; strings as they are, other values as JSON; `<nil>` when nothing is there. */
function jsonField(text: string, path: string[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const key of path) {
    if (value === null || typeof value !== 'object') return NOTHING;
    value = Array.isArray(value) ? value[Number(key)] : ownValue(value as Record<string, unknown>, key);
  }
  if (value === undefined || value === null) return NOTHING;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Evaluates KEY=value pairs in order, so that later values see earlier ones. */
export function evaluateEnv(
  entries: Array<[string, string]>,
  base: Record<string, string>,
): Record<string, string> {
  const scope = { ...base };
  const result: Record<string, string> = {};
  for (const [key, template] of entries) {
    const value = expandVariables(template, (name) => ownValue(scope, name));
    setOwn(scope, key, value);
    setOwn(result, key, value);
  }
  return result;
}

const systemNames = new Set(['PATH', 'HOME', 'LANG', 'TZ', 'SHELL']);
const systemPrefixes = ['TROUPE_', 'LC_', 'DAG_'];

/** The part of the server's environment a step may see (docs/configuration.md); nothing else leaks in. */
export function filterSystemEnv(env: Record<string, string | undefined>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (systemNames.has(key) || systemPrefixes.some((prefix) => key.startsWith(prefix))) result[key] = value;
  }
  return result;
}

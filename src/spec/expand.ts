// Variable references (workflow-format 7.1) in commands, scripts and env values:
//   $NAME ${NAME}          a param, env variable, secret or output; $1 ${1} positional params
//   ${NAME:offset:length}  a slice (length optional)
//   ${NAME:-fallback}      the fallback when NAME is unset or empty
//   ${VAR.path.to.field}   a field of VAR's JSON value (array items by index: ${VAR.items.0})
//   ${id.exitCode} ${id.stdout} ${id.stderr}  of the step with that id (the log files' paths)
// Unknown names are left as written, for the shell to expand. Backticks are not handled here: the
// runtime runs them as processes.
import { ownValue, setOwn } from '../core/index.ts';

/** What a reference can name. */
export interface ExpandScope {
  get(name: string): string | undefined;
  /** Steps by id, for ${id.exitCode}, ${id.stdout}, ${id.stderr}. */
  step?(id: string): { exitCode?: number; stdout: string; stderr: string } | undefined;
  /** How a resolved reference enters the text (`reference` as written); its value by default. */
  write?(reference: string, value: string): string;
}

const reference = /\$\{([^{}]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/g;
const plainName = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+)$/;

export function expandVariables(text: string, scope: ExpandScope | ((name: string) => string | undefined)): string {
  if (!text.includes('$')) return text;
  const resolved: ExpandScope = typeof scope === 'function' ? { get: scope } : scope;
  return text.replace(reference, (whole, braced: string | undefined, bare: string | undefined) => {
    const value = bare !== undefined ? resolved.get(bare) : resolveBraced(braced!, resolved);
    if (value === undefined) return whole;
    return resolved.write ? resolved.write(whole, value) : value;
  });
}

function resolveBraced(inner: string, scope: ExpandScope): string | undefined {
  if (plainName.test(inner)) return scope.get(inner);
  // ${NAME:-fallback}
  const fallback = /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+):-(.*)$/s.exec(inner);
  if (fallback) {
    const value = scope.get(fallback[1]);
    return value === undefined || value === '' ? expandVariables(fallback[2], scope) : value;
  }
  // ${NAME:offset} and ${NAME:offset:length}
  const slice = /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+):(-?[0-9]+)(?::([0-9]+))?$/.exec(inner);
  if (slice) {
    const value = scope.get(slice[1]);
    if (value === undefined) return undefined;
    const offset = Number(slice[2]);
    const start = offset < 0 ? Math.max(0, value.length + offset) : Math.min(offset, value.length);
    return slice[3] === undefined ? value.slice(start) : value.slice(start, start + Number(slice[3]));
  }
  // ${VAR.path} or ${id.exitCode|stdout|stderr}
  const path = /^([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+)+)$/.exec(inner);
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

/** The field at `path` of a JSON text; strings as they are, other values as JSON. */
function jsonField(text: string, path: string[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Array.isArray(value) ? value[Number(key)] : ownValue(value as Record<string, unknown>, key);
    if (value === undefined) return undefined;
  }
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

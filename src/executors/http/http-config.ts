// The http executor's settings, from `config` (decoded as Dagu decodes it, weakly typed) or, when
// the step has a `script`, from that script as a JSON document (Dagu then ignores `config`).
import { canonicalKeys, weakBoolean, weakInteger, weakString, weakStringMap, type Weak } from '../../core/index.ts';

export const HTTP_CONFIG_KEYS = ['timeout', 'headers', 'query', 'body', 'silent', 'debug', 'json', 'skipTLSVerify'] as const;

/** A reading of the step: its value, or the message that fails the step. */
export type Parsed<T> = { kind: 'ok'; value: T } | { kind: 'error'; message: string };

export interface HttpConfig {
  /** Seconds; 0: none. */
  timeout: number;
  headers: Record<string, string>;
  query: Record<string, string>;
  body: string;
  silent: boolean;
  debug: boolean;
  json: boolean;
  skipTLSVerify: boolean;
}

export function readHttpConfig(config: Record<string, unknown>, script: string | undefined): Parsed<HttpConfig> {
  if (script !== undefined && script !== '') return fromScript(script);
  // The definition's reader has spelt the config's keys as documented already (the script's are spelt here).
  const problems: string[] = [];
  const take = <T>(key: string, read: (value: unknown) => Weak<T>, fallback: T): T => {
    const result = read(config[key]);
    if (result.ok) return result.value;
    problems.push(`${key} ${result.message}`);
    return fallback;
  };
  const value: HttpConfig = {
    timeout: take('timeout', weakInteger, 0),
    headers: take('headers', weakStringMap, {}),
    query: take('query', weakStringMap, {}),
    body: take('body', weakString, ''),
    silent: take('silent', weakBoolean, false),
    debug: take('debug', weakBoolean, false),
    json: take('json', weakBoolean, false),
    skipTLSVerify: take('skipTLSVerify', weakBoolean, false),
  };
  return problems.length > 0 ? { kind: 'error', message: `http: config: ${problems.join('; ')}` } : { kind: 'ok', value };
}

/**
 * The script as Go's encoding/json reads it into Dagu's settings: keys match whatever their case,
 * unknown keys are ignored, and each value must have its field's JSON type (no "5" for 5).
 */
function fromScript(script: string): Parsed<HttpConfig> {
  let document: unknown;
  try {
    document = JSON.parse(script);
  } catch (error) {
    return { kind: 'error', message: `http: the script is read as the step's config, in JSON: ${(error as Error).message}` };
  }
  const value: HttpConfig = { timeout: 0, headers: {}, query: {}, body: '', silent: false, debug: false, json: false, skipTLSVerify: false };
  if (document === null) return { kind: 'ok', value };
  if (typeof document !== 'object' || Array.isArray(document)) return { kind: 'error', message: 'http: the script is read as the step\'s config: it must be a JSON object' };
  const named = canonicalKeys(document as Record<string, unknown>, HTTP_CONFIG_KEYS);
  for (const key of HTTP_CONFIG_KEYS) {
    const item = named[key];
    if (item === undefined || item === null) continue;
    const wrong = (type: string): Parsed<HttpConfig> => ({ kind: 'error', message: `http: the script's "${key}" must be ${type} (got ${JSON.stringify(item)})` });
    switch (key) {
      case 'timeout':
        if (typeof item !== 'number' || !Number.isInteger(item)) return wrong('an integer');
        value.timeout = item;
        break;
      case 'headers':
      case 'query':
        if (typeof item !== 'object' || Array.isArray(item) || Object.values(item).some((entry) => typeof entry !== 'string')) return wrong('an object of strings');
        value[key] = item as Record<string, string>;
        break;
      case 'body':
        if (typeof item !== 'string') return wrong('a string');
        value.body = item;
        break;
      default:
        if (typeof item !== 'boolean') return wrong('true or false');
        value[key] = item;
    }
  }
  return { kind: 'ok', value };
}

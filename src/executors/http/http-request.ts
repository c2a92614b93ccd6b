// The http executor's pure parts: the request a step describes (definition format: http executor) and the
// response's head as Dagu prints it (Go's status line, then its header block).
export interface HttpRequestSpec {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Milliseconds; 0 leaves the request to the step's timeoutSec and to a stop. */
  timeoutMs: number;
  silent: boolean;
  skipTLSVerify: boolean;
}

export type Parsed<T> = { kind: 'ok'; value: T } | { kind: 'error'; message: string };

export function parseHttpStep(command: string | undefined, config: Record<string, unknown>): Parsed<HttpRequestSpec> {
  const [method = '', ...rest] = (command ?? '').trim().split(/\s+/);
  const target = rest.join(' ');
  if (method === '' || target === '') return { kind: 'error', message: `http: the command must be a method and a URL, such as "GET https://example.com" (got "${command ?? ''}")` };
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { kind: 'error', message: `http: invalid URL "${target}"` };
  }
  appendQuery(url, stringMap(config.query));
  const timeout = Number(config.timeout ?? 0);
  const spec: HttpRequestSpec = {
    method: method.toUpperCase(),
    url,
    headers: stringMap(config.headers),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : 0,
    silent: config.silent === true,
    skipTLSVerify: config.skipTLSVerify === true,
  };
  if (config.body !== undefined && config.body !== null && String(config.body) !== '') spec.body = String(config.body);
  return { kind: 'ok', value: spec };
}

/**
 * Config query parameters come after the URL's own, sorted by name, and never replace them: the
 * URL Dagu (resty) sends for the same step.
 */
function appendQuery(url: URL, query: Record<string, string>): void {
  const names = Object.keys(query).sort();
  if (names.length === 0) return;
  const added = new URLSearchParams(names.map((name) => [name, query[name]] as [string, string])).toString();
  url.search = url.search === '' || url.search === '?' ? added : `${url.search.slice(1)}&${added}`;
}

function stringMap(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, String(item ?? '')]));
}

/**
 * The status line and headers Dagu writes before the body: Go's `Status` ("200 OK") on its own
 * line, then Go's `Header.Write`: canonical names in sorted order, one `Name: value\r\n` per value,
 * no blank line after. Go's client drops Transfer-Encoding from the header map, so it is left out.
 */
export function responseHead(statusCode: number, statusText: string, headers: Record<string, string | string[] | undefined>): string {
  const lines: string[] = [];
  const names = Object.keys(headers).filter((name) => name.toLowerCase() !== 'transfer-encoding');
  const canonical = names.map((name) => [canonicalHeaderName(name), name] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [shown, name] of canonical) {
    const value = headers[name];
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      lines.push(`${shown}: ${item.replace(/[\r\n]/g, ' ').trim()}\r\n`);
    }
  }
  return `${`${statusCode} ${statusText}`.trimEnd()}\n${lines.join('')}`;
}

/** Go's CanonicalMIMEHeaderKey: "content-type" -> "Content-Type"; a name with other characters stays as it is. */
export function canonicalHeaderName(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

export function isSuccess(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}

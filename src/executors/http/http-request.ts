// The http executor's pure parts: the request a step describes (definition format: http executor) and the
// response's head as Dagu prints it (Go's status line, then its header block).
import { readHttpConfig, type Parsed } from './http-config.ts';

export interface HttpRequestSpec {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Milliseconds; 0 leaves the request to the step's timeoutSec and to a stop. */
  timeoutMs: number;
  silent: boolean;
  skipTLSVerify: boolean;
  /** Print `{status_code, headers, body}` with the body decoded from JSON, as Dagu's `json` does. */
  json: boolean;
  /** Describe the request and the response on the step's stderr. */
  debug: boolean;
}

/** Methods Dagu's client (resty) sends without a body, whatever the config's `body`. */
const NO_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

export function parseHttpStep(command: string | undefined, config: Record<string, unknown>, script?: string): Parsed<HttpRequestSpec> {
  const [method = '', ...rest] = (command ?? '').trim().split(/\s+/);
  const target = rest.join(' ');
  if (method === '' || target === '') return { kind: 'error', message: `http: the command must be a method and a URL, such as "GET https://example.com" (got "${command ?? ''}")` };
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { kind: 'error', message: `http: invalid URL "${target}"` };
  }
  const read = readHttpConfig(config, script);
  if (read.kind === 'error') return read;
  const settings = read.value;
  appendQuery(url, settings.query);
  const spec: HttpRequestSpec = {
    method: method.toUpperCase(),
    url,
    headers: { ...settings.headers },
    timeoutMs: settings.timeout > 0 ? settings.timeout * 1000 : 0,
    silent: settings.silent,
    skipTLSVerify: settings.skipTLSVerify,
    json: settings.json,
    debug: settings.debug,
  };
  if (!NO_BODY.has(spec.method)) {
    // resty sends the body (even an empty one) and, without a Content-Type, names its type by sniffing it.
    spec.body = settings.body;
    if (!Object.keys(spec.headers).some((name) => name.toLowerCase() === 'content-type')) spec.headers['Content-Type'] = sniffContentType(settings.body);
  }
  return { kind: 'ok', value: spec };
}

/**
 * The type Go's http.DetectContentType gives a text body, for the forms a definition's string can
 * take: HTML, XML, text, or bytes that are no text.
 */
export function sniffContentType(body: string): string {
  const head = body.slice(0, 512);
  const trimmed = head.replace(/^[\t\n\f\r ]+/, '');
  const html = /^<(!DOCTYPE HTML|HTML|HEAD|SCRIPT|IFRAME|H1|DIV|FONT|TABLE|A|STYLE|TITLE|B|BODY|BR|P|!--)[ >]/i;
  if (html.test(trimmed)) return 'text/html; charset=utf-8';
  if (trimmed.startsWith('<?xml')) return 'text/xml; charset=utf-8';
  if (head.startsWith('%PDF-')) return 'application/pdf';
  if (/[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]/.test(head)) return 'application/octet-stream';
  return 'text/plain; charset=utf-8';
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

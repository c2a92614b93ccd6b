// What the http executor prints for `json` (Dagu's result document) and for `debug` (a report of
// the request and the response, in the shape of the one Dagu's client, resty, writes).
import { ownValue, setOwn } from '../../core/index.ts';
import { goMarshalIndent } from '../go-json.ts';
import type { Parsed } from './http-config.ts';
import { canonicalHeaderName, type HttpRequestSpec } from './http-request.ts';

type Headers = Record<string, string | string[] | undefined>;

/**
 * `{status_code, headers, body}` with a 1-space indent and no newline after, as Dagu prints it.
 * A silent step's 2xx response leaves status_code 0 and headers null, as in Dagu. The body must
 * be JSON: Go's message when it is not.
 */
export function jsonResult(statusCode: number, headers: Headers, body: Buffer, silentSuccess: boolean): Parsed<string> {
  const text = body.toString('utf8');
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch (error) {
    return { kind: 'error', message: goJsonError(text, error as Error) };
  }
  // Go's struct order: status_code, headers, body (the header map's keys are sorted when written).
  const fields = [
    ` "status_code": ${silentSuccess ? 0 : statusCode}`,
    ` "headers": ${silentSuccess ? 'null' : goMarshalIndent(headerMap(headers), ' ', ' ')}`,
    ` "body": ${goMarshalIndent(decoded, ' ', ' ')}`,
  ];
  return { kind: 'ok', value: `{\n${fields.join(',\n')}\n}` };
}

/** Go's http.Header: canonical names, each with its list of values; Transfer-Encoding is not one of them. */
function headerMap(headers: Headers): Record<string, string[]> {
  const map: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.toLowerCase() === 'transfer-encoding') continue;
    const key = canonicalHeaderName(name);
    const list = ownValue(map, key) ?? [];
    list.push(...(Array.isArray(value) ? value : [value]));
    setOwn(map, key, list);
  }
  return map;
}

/** The two messages a Go user knows from encoding/json; JavaScript's own for the rest. */
function goJsonError(text: string, error: Error): string {
  const start = text.replace(/^[ \t\r\n]+/, '');
  if (start === '') return 'unexpected end of JSON input';
  if (!/^[{["0-9tfn-]/.test(start)) return `invalid character ${JSON.stringify(start[0]).replace(/^"|"$/g, "'")} looking for beginning of value`;
  return `invalid JSON in the response body: ${error.message}`;
}

const RULE = '-'.repeat(78);
const FRAME = '='.repeat(78);

export function debugRequest(spec: HttpRequestSpec): string {
  const headers = Object.entries(spec.headers).map(([name, value]) => `\t${canonicalHeaderName(name)}: ${value}\n`).join('');
  const body = spec.body === undefined || spec.body === '' ? '***** NO CONTENT *****' : spec.body;
  return `${FRAME}\n~~~ REQUEST ~~~\n${spec.method}  ${spec.url.pathname}${spec.url.search}  HTTP/1.1\nHOST   : ${spec.url.host}\nHEADERS:\n${headers}BODY   :\n${body}\n${RULE}\n`;
}

export function debugResponse(statusCode: number, statusText: string, headers: Headers, body: Buffer, elapsedMs: number): string {
  const names = Object.keys(headers).filter((name) => headers[name] !== undefined).sort();
  const lines = names.map((name) => {
    const value = headers[name]!;
    return `\t${canonicalHeaderName(name)}: ${Array.isArray(value) ? value.join(', ') : value}\n`;
  }).join('');
  const shown = body.length === 0 ? '***** NO CONTENT *****' : body.toString('utf8');
  const status = `${statusCode} ${statusText ?? ''}`.trim();
  return `~~~ RESPONSE ~~~\nSTATUS       : ${status}\nTIME DURATION: ${elapsedMs.toFixed(3)}ms\nHEADERS      :\n${lines}BODY         :\n${shown}\n${FRAME}\n`;
}

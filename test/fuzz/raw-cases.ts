// Raw bytes for a socket (sent with test/raw-http.ts): request lines, headers and framing no HTTP
// client would send.
import fc from 'fast-check';

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: fuzz\r\n${extra}\r\n`;
const HEALTH = '/api/v2/health';
const SPEC_BODY = JSON.stringify({ spec: 'steps: ["true"]' });
const validate = (body: string, headers: string) => `POST /api/v2/dags/validate HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;

interface RawCase {
  name: string;
  bytes: Buffer | string;
  halfClose?: boolean;
}

/** Malformed and unusual requests. None is expected to succeed; every answer must be an error document or a success. */
export function malformedCases(seed: number): RawCase[] {
  const cases: RawCase[] = [
    { name: 'bad request line', bytes: 'GARBAGE\r\n\r\n' },
    { name: 'method only', bytes: 'GET\r\n\r\n' },
    { name: 'unknown version', bytes: `GET ${HEALTH} HTTP/9.9\r\nHost: fuzz\r\n\r\n` },
    { name: 'HTTP/0.9 style', bytes: `GET ${HEALTH}\r\n`, halfClose: true },
    { name: 'bare LF line ends', bytes: `GET ${HEALTH} HTTP/1.1\nHost: fuzz\n\n` },
    { name: 'header without colon', bytes: `GET ${HEALTH} HTTP/1.1\r\nHost: fuzz\r\nNoColonHere\r\n\r\n` },
    { name: 'NUL in header value', bytes: `GET ${HEALTH} HTTP/1.1\r\nHost: fuzz\r\nX-A: a\u0000b\r\n\r\n` },
    { name: 'NUL in path', bytes: `GET /api/v2/dags/a\u0000b HTTP/1.1\r\nHost: fuzz\r\n\r\n` },
    { name: 'raw UTF-8 in path', bytes: Buffer.from(`GET /api/v2/dags/日本 HTTP/1.1\r\nHost: fuzz\r\n\r\n`, 'utf8') },
    { name: 'space in path', bytes: `GET /api/v2/dags/a b HTTP/1.1\r\nHost: fuzz\r\n\r\n` },
    { name: 'header folding', bytes: `GET ${HEALTH} HTTP/1.1\r\nHost: fuzz\r\nX-A: a\r\n  continued\r\n\r\n` },
    { name: 'oversized header', bytes: get(HEALTH, `X-Big: ${'a'.repeat(70_000)}\r\n`) },
    { name: 'oversized path', bytes: get(`/api/v2/dags/${'b'.repeat(20_000)}`) },
    { name: 'many headers', bytes: get(HEALTH, Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('')) },
    { name: 'absolute-form target', bytes: `GET http://fuzz${HEALTH} HTTP/1.1\r\nHost: fuzz\r\n\r\n` },
    { name: 'asterisk target', bytes: 'OPTIONS * HTTP/1.1\r\nHost: fuzz\r\n\r\n' },
    { name: 'CONNECT', bytes: 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n' },
    { name: 'websocket upgrade', bytes: get(HEALTH, 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n') },
    { name: 'h2c upgrade', bytes: get(HEALTH, 'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n') },
    { name: 'HTTP/2 preface', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' },
    { name: 'negative Content-Length', bytes: validate('{}', 'Content-Length: -1\r\n') },
    { name: 'non-numeric Content-Length', bytes: validate('{}', 'Content-Length: abc\r\n') },
    { name: 'enormous Content-Length', bytes: validate('{}', 'Content-Length: 99999999999999999999\r\n') },
    { name: 'Content-Length longer than the body', bytes: validate('{}', 'Content-Length: 50\r\n'), halfClose: true },
    { name: 'chunked body cut short', bytes: validate('5\r\n{}', 'Transfer-Encoding: chunked\r\n'), halfClose: true },
    { name: 'headers cut short', bytes: `GET ${HEALTH} HTTP/1.1\r\nHost: fu`, halfClose: true },
    { name: 'Content-Length and chunked', bytes: validate('2\r\n{}\r\n0\r\n\r\n', 'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n') },
    { name: 'chunked body', bytes: validate('2\r\n{}\r\n0\r\n\r\n', 'Transfer-Encoding: chunked\r\n') },
    { name: 'bad chunk size', bytes: validate('zz\r\n{}\r\n0\r\n\r\n', 'Transfer-Encoding: chunked\r\n') },
    { name: 'unknown transfer coding', bytes: validate('{}', 'Transfer-Encoding: gzip\r\n') },
    { name: 'Expect: 100-continue', bytes: validate(SPEC_BODY, `Content-Length: ${SPEC_BODY.length}\r\nExpect: 100-continue\r\n`) },
    { name: 'unknown Expect', bytes: validate('{}', 'Content-Length: 2\r\nExpect: teapot\r\n') },
    { name: 'lowercase method', bytes: `get ${HEALTH} HTTP/1.1\r\nHost: fuzz\r\n\r\n` },
    { name: 'empty line first', bytes: `\r\n${get(HEALTH)}` },
    { name: 'no Host', bytes: `GET ${HEALTH} HTTP/1.1\r\n\r\n` },
    { name: 'two Hosts', bytes: get(HEALTH, 'Host: other\r\n') },
  ];
  const noise = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 200 }), { seed, numRuns: 20 });
  noise.forEach((bytes, index) => cases.push({ name: `random bytes ${index}`, bytes: Buffer.from(bytes) }));
  const mutated = fc.sample(fc.tuple(fc.nat(60), fc.uint8Array({ minLength: 1, maxLength: 4 })), { seed: seed + 1, numRuns: 20 });
  mutated.forEach(([at, bytes], index) => {
    const request = Buffer.from(get(HEALTH));
    cases.push({ name: `mutated request ${index}`, bytes: Buffer.concat([request.subarray(0, at), Buffer.from(bytes), request.subarray(at)]) });
  });
  return cases;
}

/** Requests every HTTP/1.1 server must answer as specified. */
export const protocolCases = {
  http10: `GET ${HEALTH} HTTP/1.0\r\n\r\n`,
  pipelined: `${get(HEALTH)}${get('/api/v2/dags/tags')}`,
  head: `HEAD ${HEALTH} HTTP/1.1\r\nHost: fuzz\r\n\r\n`,
  headThenGet: `HEAD ${HEALTH} HTTP/1.1\r\nHost: fuzz\r\n\r\n${get('/api/v2/dags/tags')}`,
  /** Two lengths that disagree, and after the shorter body a request a proxy would not have seen. */
  duplicateLength: `POST /api/v2/dags/validate HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 39\r\n\r\n{}${get('/api/v2/dags/tags')}`,
};

// A raw HTTP/1.x exchange over one TCP connection: the bytes go out exactly as written (pipelined
// requests, HTTP/1.0, duplicate headers, broken request lines), the answers are split into responses.
import { connect } from 'node:net';

export interface RawResponse {
  version: string;
  status: number;
  /** Header names lower-cased; repeated headers keep every value. */
  headers: Map<string, string[]>;
  body: string;
}

export interface Exchange {
  responses: RawResponse[];
  /** The server closed the connection (it was still open when `expect` responses had come). */
  closed: boolean;
  /** Bytes after the last complete response, when the server ended mid-response. */
  rest: string;
}

export interface ExchangeOptions {
  /** Stop waiting once this many responses have come (the connection may stay open). */
  expect?: number;
  /** For each response in order: was its request a HEAD (so its Content-Length announces no body). */
  heads?: boolean[];
  /** A guard against a test hanging, never an assertion: give up (and say so) after this. */
  giveUpMs?: number;
}

export function header(response: RawResponse, name: string): string | undefined {
  return response.headers.get(name)?.[0];
}

export function exchange(port: number, request: string | Buffer, options: ExchangeOptions = {}): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(guard);
      socket.destroy();
      try {
        const { responses, rest } = splitResponses(received, options.heads ?? []);
        resolve({ responses, closed, rest });
      } catch (error) {
        reject(error);
      }
    };
    const guard = setTimeout(() => {
      finished = true;
      socket.destroy();
      reject(new Error(`no end of exchange after ${options.giveUpMs ?? 20_000} ms; received: ${JSON.stringify(received.toString('latin1'))}`));
    }, options.giveUpMs ?? 20_000);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (options.expect !== undefined && splitResponses(received, options.heads ?? []).responses.length >= options.expect) finish(false);
    });
    socket.on('error', () => finish(true)); // a reset is a close too
    socket.on('close', () => finish(true));
    socket.write(request);
  });
}

/** Responses that are complete in `bytes`; a body is framed by Content-Length (troupe never chunks). */
export function splitResponses(bytes: Buffer, heads: boolean[]): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const lines = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const statusLine = /^(HTTP\/\d\.\d) (\d{3})/.exec(lines[0]);
    if (!statusLine) throw new Error(`not a status line: ${JSON.stringify(lines[0])}`);
    const headers = new Map<string, string[]>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const lengths = headers.get('content-length') ?? [];
    const length = heads[responses.length] ? 0 : Number(lengths[0] ?? 0);
    if (end + 4 + length > bytes.length) break;
    responses.push({
      version: statusLine[1],
      status: Number(statusLine[2]),
      headers,
      body: bytes.subarray(end + 4, end + 4 + length).toString('utf8'),
    });
    at = end + 4 + length;
  }
  return { responses, rest: bytes.subarray(at).toString('latin1') };
}

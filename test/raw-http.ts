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
  /** Bytes after the last complete response (a body sent to HEAD, a response cut short, not HTTP). */
  rest: string;
}

interface ExchangeOptions {
  /** Stop waiting once this many final (non-1xx) responses have come (the connection may stay open). */
  expect?: number;
  /** For each response in order: was its request a HEAD (so its Content-Length announces no body). */
  heads?: boolean[];
  /** End the client's side after writing, for requests a server would otherwise wait on. */
  halfClose?: boolean;
  /** A guard against a test hanging, never an assertion: give up (and say so) after this. */
  giveUpMs?: number;
  /**
   * Instead of giving up, answer with what came after this long: for garbage a server may
   * neither answer nor close on.
   */
  settleMs?: number;
}

export function header(response: RawResponse, name: string): string | undefined {
  return response.headers.get(name)?.[0];
}

export function exchange(port: number, request: string | Buffer, options: ExchangeOptions = {}): Promise<Exchange> {
  const heads = options.heads ?? [];
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    let received = Buffer.alloc(0);
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(guard);
      socket.destroy();
      resolve({ ...splitResponses(received, heads), closed });
    };
    const guard = options.settleMs !== undefined
      ? setTimeout(() => finish(false), options.settleMs)
      : setTimeout(() => {
        finished = true;
        socket.destroy();
        reject(new Error(`no end of exchange after ${options.giveUpMs ?? 20_000} ms; received: ${JSON.stringify(received.toString('latin1'))}`));
      }, options.giveUpMs ?? 20_000);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (options.expect !== undefined && splitResponses(received, heads).responses.filter((response) => response.status >= 200).length >= options.expect) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true)); // a reset is a close too
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      socket.write(request);
      if (options.halfClose) socket.end();
    });
  });
}

/**
 * A request head, then a chunked body of up to `offered` bytes written as fast as the connection
 * takes it, until an answer comes or the connection closes; `written`: the body bytes the socket
 * took before that.
 */
export function streamBody(port: number, head: string, offered: number, giveUpMs = 60_000): Promise<Exchange & { written: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const piece = 64 * 1024;
    const chunk = Buffer.concat([Buffer.from(`${piece.toString(16)}\r\n`), Buffer.alloc(piece, 'x'), Buffer.from('\r\n')]);
    let received = Buffer.alloc(0);
    let written = 0;
    let answered = false;
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(guard);
      socket.destroy();
      resolve({ ...splitResponses(received, []), closed, written });
    };
    const guard = setTimeout(() => {
      finished = true;
      socket.destroy();
      reject(new Error(`no answer after ${giveUpMs} ms, ${written} bytes written`));
    }, giveUpMs);
    // One chunk a turn of the event loop, so that an answer is read before the next write: a
    // write into the connection the server closed after answering would lose the answer.
    const pump = () => {
      if (answered || socket.destroyed) return;
      if (written >= offered) {
        socket.write('0\r\n\r\n');
        return;
      }
      written += piece;
      if (socket.write(chunk)) setImmediate(pump);
    };
    socket.on('drain', () => setImmediate(pump));
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      answered ||= splitResponses(received, []).responses.length > 0;
    });
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true)); // writing into a closed connection resets it
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/**
 * Responses that are complete in `bytes`: a body is framed by chunked coding, Content-Length, or
 * the end of the bytes; HEAD answers, 1xx, 204 and 304 have none.
 */
function splitResponses(bytes: Buffer, heads: boolean[]): { responses: RawResponse[]; rest: string } {
  const text = bytes.toString('latin1');
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const [line, ...lines] = text.slice(at, headEnd).split('\r\n');
    const statusLine = /^(HTTP\/\d\.\d) (\d{3})/.exec(line);
    if (!statusLine) break;
    const status = Number(statusLine[2]);
    const headers = new Map<string, string[]>();
    for (const headerLine of lines) {
      const colon = headerLine.indexOf(':');
      if (colon <= 0) continue;
      const name = headerLine.slice(0, colon).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), headerLine.slice(colon + 1).trim()]);
    }
    let bodyStart = headEnd + 4;
    let body = '';
    const length = headers.get('content-length')?.[0];
    if (heads[responses.length] || status < 200 || status === 204 || status === 304) {
      // No body, whatever the headers say.
    } else if (headers.get('transfer-encoding')?.[0].toLowerCase() === 'chunked') {
      for (;;) {
        const sizeEnd = text.indexOf('\r\n', bodyStart);
        if (sizeEnd < 0) break;
        const size = Number.parseInt(text.slice(bodyStart, sizeEnd), 16);
        if (!Number.isFinite(size)) break;
        body += text.slice(sizeEnd + 2, sizeEnd + 2 + size);
        bodyStart = sizeEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (length !== undefined) {
      if (text.length < bodyStart + Number(length)) break;
      body = text.slice(bodyStart, bodyStart + Number(length));
      bodyStart += Number(length);
    } else {
      body = text.slice(bodyStart);
      bodyStart = text.length;
    }
    responses.push({ version: statusLine[1], status, headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    at = bodyStart;
  }
  return { responses, rest: text.slice(at) };
}

/** A request sent alone on a connection of its own: when its last byte went to the kernel, and its JSON answer. */
export interface SentAlone {
  written: Promise<void>;
  /** Rejects, saying how, when the connection ends (a reset, a close) before a whole answer came. */
  answer: Promise<{ status: number; body: any }>;
}

/** Sends a request below /api/v2 on a new connection; `written` settles once its last byte is handed to the kernel. */
export function sendAlone(port: number, method: string, path: string, payload?: unknown): SentAlone {
  const body = Buffer.from(payload === undefined ? '' : JSON.stringify(payload));
  const socket = connect(port, '127.0.0.1');
  const head = `${method} /api/v2${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${payload === undefined ? '' : `content-type: application/json\r\ncontent-length: ${body.length}\r\n`}\r\n`;
  // A write that fails shows in `answer`: the connection ends without one.
  const written = new Promise<void>((resolve) => socket.write(Buffer.concat([Buffer.from(head), body]), () => resolve()));
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const cut = (reason: string) => reject(new Error(`${reason} after ${received.length} bytes`));
    socket.on('error', (error: NodeJS.ErrnoException) => cut(error.code ?? error.message));
    socket.on('close', () => cut('closed'));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1]);
      if (received.length < end + 4 + length) return;
      resolve({ status: Number(headers.split(' ')[1]), body: JSON.parse(received.subarray(end + 4, end + 4 + length).toString('utf8')) });
      socket.destroy();
    });
  });
  return { written, answer };
}

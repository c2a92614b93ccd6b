// Large answers, gzipped for the clients that accept it. The details of a run of 10,000 steps are
// about 10 MB of JSON; writing them to a socket cost the main thread 30 - 48 ms of the kernel's
// copying alone (measured on loopback), where the same answer gzipped is about 0.3 MB, made on
// libuv's thread pool in 13 ms. Answers under COMPRESSED_FROM bytes go as they are: a listing
// polled hundreds of times a second would spend more on compressing than on sending.
import { gzip } from 'node:zlib';
import type { HttpResponse } from './types.ts';
import { varyAlso } from './vary.ts';

/** The smallest answer gzipped (1 MiB). */
export const COMPRESSED_FROM = 1 << 20;

/**
 * Whether an Accept-Encoding header accepts gzip: named (or `*`) with a weight above 0. An
 * explicit `gzip;q=0` refuses it even where `*` would allow it.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let wildcard = false;
  for (const part of header.split(',')) {
    const [coding, ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const weight = parameters.find((parameter) => parameter.startsWith('q='));
    const accepted = weight === undefined || Number(weight.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return accepted;
    if (coding === '*') wildcard = accepted;
  }
  return wildcard;
}

/**
 * Gzipped bodies by the memory they were made from: an answer kept and served again (a large run
 * read before, a listing unchanged) is compressed once. Bodies are never written to once answered.
 */
const compressedOf = new WeakMap<ArrayBufferLike, Map<string, Promise<Buffer>>>();

function compressed(body: Buffer): Promise<Buffer> {
  let made = compressedOf.get(body.buffer);
  if (!made) compressedOf.set(body.buffer, made = new Map());
  const key = `${body.byteOffset}:${body.length}`;
  let answer = made.get(key);
  if (!answer) {
    // Level 1: a tenth of level 6's time on run details, for a few percent more bytes. Output in
    // pieces of 1 MiB: the pool's results come back to the main thread one callback per piece.
    answer = new Promise<Buffer>((resolve, reject) => gzip(body, { level: 1, chunkSize: COMPRESSED_FROM }, (error, zipped) => (error ? reject(error) : resolve(zipped))));
    made.set(key, answer);
    answer.catch(() => made!.delete(key));
  }
  return answer;
}

/**
 * The response as sent to a client with these request headers: a body of COMPRESSED_FROM bytes or
 * more, not encoded already, gzipped when the client accepts it. Such an answer varies with
 * Accept-Encoding either way, and says so.
 */
export async function compressLarge(requestHeaders: Record<string, string>, response: HttpResponse): Promise<HttpResponse> {
  const { body } = response;
  if (!Buffer.isBuffer(body) || body.length < COMPRESSED_FROM || response.stream || response.headers?.['content-encoding'] !== undefined) return response;
  const headers = { ...response.headers, vary: varyAlso(response.headers?.vary, 'accept-encoding') };
  if (!acceptsGzip(requestHeaders['accept-encoding'])) return { ...response, headers };
  try {
    return { ...response, headers: { ...headers, 'content-encoding': 'gzip' }, body: await compressed(body) };
  } catch {
    return { ...response, headers }; // zlib failed (memory): the answer goes as it is
  }
}

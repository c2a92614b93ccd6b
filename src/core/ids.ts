// Identifier generation: UUIDv7 for run ids (time-ordered, as Dagu), short hex for attempts.
import { createHash, randomFillSync } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * Random bytes drawn from the system's generator a page at a time, as crypto.randomUUID does: one
 * randomBytes() call per id cost about 0.07 ms of each start's 1.4 ms on the main thread (profiled
 * under the latency bench), most of it the call, not the bytes.
 */
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

function randomOf(length: number): Buffer {
  if (entropyUsed + length > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  const bytes = Buffer.from(entropy.subarray(entropyUsed, entropyUsed + length));
  entropyUsed += length;
  return bytes;
}

export function uuidv7(now: number = Date.now()): string {
  // A counter in rand_a keeps ids generated in the same millisecond ordered.
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    sequence = 0;
  }
  const bytes = randomOf(16);
  const ms = BigInt(now);
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return uuidText(bytes);
}

/**
 * A run id that the same `parts` always give (a UUIDv8 from their SHA-256, RFC 9562's name-based
 * form): a sub DAG run's, so that a retried parent finds the children it started before.
 */
export function derivedRunId(parts: readonly (string | number)[]): string {
  const bytes = createHash('sha256').update(JSON.stringify(parts)).digest().subarray(0, 16);
  bytes[6] = 0x80 | (bytes[6] & 0x0f);
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return uuidText(bytes);
}

function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function attemptId(): string {
  return randomOf(3).toString('hex');
}

/** A run's key in maps and sets: ids are unique per DAG name only. */
export function runKey(name: string, dagRunId: string): string {
  return `${name}\u0000${dagRunId}`;
}

// A new run's first record encoded before its save, a slice of nodes per turn of the event loop,
// and, for a run the store has no record of, its node rows written then too: the save of a run of
// 10,000 steps then only issues its summary, its index rows and its steps, instead of holding the
// event loop while it encodes and issues 10,000 nodes in one piece.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { asBinary, type Binary, type Database } from 'lmdb';
import type { RunRecord } from '../core/index.ts';
import type { Key } from './stored-runs.ts';

/** A database's value encoder (lmdb-js's msgpackr): each value it encodes carries its own structures. */
export interface ValueEncoder {
  encode(value: unknown): Uint8Array;
}

/** A database's encoder: lmdb-js has one per database, which its types do not show. */
export const encoderOf = (db: Database<any, Key>) => (db as unknown as { encoder: ValueEncoder }).encoder;

/** A value encoded already, which lmdb-js's types do not allow for a typed database. */
export const already = <V>(value: unknown) => value as V;

/** Values a database's put stores as they are (lmdb-js's asBinary, made here too: 10,000 of them took milliseconds). */
export interface EncodedRecord {
  /** Each node without its step, as the nodes database stores it; absent when they were written ahead. */
  nodes?: Binary[];
  /** The array of the nodes' steps, as the step views database stores it. */
  steps: Binary;
}

/**
 * The values the first write of `record` puts, `perTurn` nodes per turn. The steps' array is
 * encoded in pieces of `perTurn` steps joined under one array header: each piece defines the
 * structures it uses, which a decoder takes as they come (msgpack records), so the joined bytes
 * decode to the same array. Undefined if the encoder writes arrays some other way.
 * With `put`, each node is written as it is encoded, and this resolves once they are all durable.
 */
export async function encodeAhead(record: RunRecord, encoders: { node: ValueEncoder; steps: ValueEncoder }, perTurn: number, put?: (index: number, value: Binary) => Promise<unknown>): Promise<EncodedRecord | undefined> {
  const nodes: Binary[] = [];
  const writes = new Set<Promise<unknown>>();
  const pieces: Uint8Array[] = [arrayHeader(record.nodes.length)];
  for (let from = 0; from < record.nodes.length; from += perTurn) {
    await nextTurn();
    const slice = record.nodes.slice(from, from + perTurn);
    const piece = encoders.steps.encode(slice.map((node) => node.step));
    const header = arrayHeader(slice.length);
    if (!header.every((byte, index) => piece[index] === byte)) return undefined;
    pieces.push(Buffer.from(piece.subarray(header.length)));
    // Copied out of the encoder's buffer, which later writes reuse.
    const encoded = slice.map(({ step: _step, ...stored }) => encoders.node.encode(stored));
    const joined = Buffer.concat(encoded);
    let offset = 0;
    for (const [at, bytes] of encoded.entries()) {
      const value = asBinary(joined.subarray(offset, offset += bytes.length));
      // The writes of a turn share one transaction and one promise.
      if (put) writes.add(put(from + at, value));
      else nodes.push(value);
    }
  }
  await Promise.all(writes);
  return { ...(put ? {} : { nodes }), steps: asBinary(Buffer.concat(pieces)) };
}

/** msgpack's header of an array of `length` items. */
function arrayHeader(length: number): Uint8Array {
  if (length < 16) return Uint8Array.of(0x90 | length);
  if (length < 0x10000) return Uint8Array.of(0xdc, length >> 8, length & 0xff);
  return Uint8Array.of(0xdd, length >>> 24, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff);
}

// A new run's first record encoded before its save, a slice of nodes per turn of the event loop:
// the save of a run of 10,000 steps then only issues its writes, still in one transaction, instead
// of holding the event loop while it encodes 10,000 nodes and their steps in one piece.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RunRecord } from '../core/index.ts';

/** A database's value encoder (lmdb-js's msgpackr): each value it encodes carries its own structures. */
export interface ValueEncoder {
  encode(value: unknown): Uint8Array;
}

export interface EncodedRecord {
  /** Each node without its step, as the nodes database stores it. */
  nodes: Uint8Array[];
  /** The array of the nodes' steps, as the step views database stores it. */
  steps: Uint8Array;
}

/**
 * The values the first write of `record` puts, `perTurn` nodes per turn. The steps' array is
 * encoded in pieces of `perTurn` steps joined under one array header: each piece defines the
 * structures it uses, which a decoder takes as they come (msgpack records), so the joined bytes
 * decode to the same array. Undefined if the encoder writes arrays some other way.
 */
export async function encodeAhead(record: RunRecord, nodeEncoder: ValueEncoder, stepsEncoder: ValueEncoder, perTurn: number): Promise<EncodedRecord | undefined> {
  const nodes: Uint8Array[] = [];
  const pieces: Uint8Array[] = [arrayHeader(record.nodes.length)];
  for (let from = 0; from < record.nodes.length; from += perTurn) {
    await nextTurn();
    const slice = record.nodes.slice(from, from + perTurn);
    // Copied out of the encoder's buffer, which later writes reuse.
    const encoded = slice.map(({ step: _step, ...stored }) => nodeEncoder.encode(stored));
    const joined = Buffer.concat(encoded);
    let offset = 0;
    for (const bytes of encoded) nodes.push(joined.subarray(offset, offset += bytes.length));
    const piece = stepsEncoder.encode(slice.map((node) => node.step));
    const header = arrayHeader(slice.length);
    if (!header.every((byte, index) => piece[index] === byte)) return undefined;
    pieces.push(Buffer.from(piece.subarray(header.length)));
  }
  return { nodes, steps: Buffer.concat(pieces) };
}

/** msgpack's header of an array of `length` items. */
function arrayHeader(length: number): Uint8Array {
  if (length < 16) return Uint8Array.of(0x90 | length);
  if (length < 0x10000) return Uint8Array.of(0xdc, length >> 8, length & 0xff);
  return Uint8Array.of(0xdd, length >>> 24, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff);
}

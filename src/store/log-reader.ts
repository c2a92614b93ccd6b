// Reads a chunk of lines from a log file. Small files are counted exactly; for large ones the
// requested lines are found by reading from the needed end only and totalLines is estimated. From
// a byte offset, only the bytes from there are read. Lines are cut on the file's bytes and each is
// decoded whole, so a character is never split between two reads.
import { open, type FileHandle } from 'node:fs/promises';
import { MAX_LOG_LINES, type LogChunk, type LogQuery } from '../core/index.ts';

export const DEFAULT_LINES = 1000;
/** Files up to this size are read whole and counted exactly. */
export const EXACT_LIMIT = 4 * 1024 * 1024;
const BLOCK = 64 * 1024;
const NEWLINE = 10;

const empty: LogChunk = { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false, nextOffset: 0 };

export async function readLogChunk(path: string, query: LogQuery): Promise<LogChunk | undefined> {
  const ended = query.ended ?? true;
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (query.byteOffset !== undefined) return await fromByte(handle, size, query.byteOffset, limitOf(query), ended);
    if (size === 0) return { ...empty };
    if (size <= EXACT_LIMIT) {
      const buffer = Buffer.alloc(size);
      await handle.read(buffer, 0, size, 0);
      return await exactChunk(buffer, query, ended);
    }
    return query.tail ? await tailOfLarge(handle, size, query.tail, ended) : await headOfLarge(handle, size, query, ended);
  } finally {
    await handle.close();
  }
}

function limitOf(query: LogQuery): number {
  return Math.min(query.limit || DEFAULT_LINES, MAX_LOG_LINES);
}

/** Precedence: tail > head > offset (+limit) > the first lines (docs/api.md). */
function selection(query: LogQuery): { start: number; count: number } | { tail: number } {
  if (query.tail) return { tail: Math.min(query.tail, MAX_LOG_LINES) };
  if (query.head) return { start: 0, count: Math.min(query.head, MAX_LOG_LINES) };
  return { start: Math.max((query.offset ?? 1) - 1, 0), count: limitOf(query) };
}

/** Where the lines that may be returned end: the file's end, or before a last line without its newline. */
function wholeEnd(data: Buffer, base: number, size: number, ended: boolean): number {
  if (ended) return size;
  const last = data.lastIndexOf(NEWLINE);
  return last < 0 ? base : base + last + 1;
}

async function exactChunk(buffer: Buffer, query: LogQuery, ended: boolean): Promise<LogChunk> {
  let totalLines = 0;
  for (let at = buffer.indexOf(NEWLINE); at >= 0; at = buffer.indexOf(NEWLINE, at + 1)) totalLines++;
  if (buffer[buffer.length - 1] !== NEWLINE) totalLines++;
  const pick = selection(query);
  if ('tail' in pick) {
    const start = Math.max(totalLines - pick.tail, 0);
    const scan = await scanLines([buffer], 0, start, pick.tail, true);
    return { ...contentOf(scan), totalLines, hasMore: start > 0, isEstimate: false, nextOffset: wholeEnd(buffer, 0, buffer.length, ended) };
  }
  const scan = await scanLines([buffer], 0, pick.start, pick.count, true);
  return { ...contentOf(scan), totalLines, hasMore: scan.more, isEstimate: false, nextOffset: nextOf(scan, ended) };
}

/** The whole lines that start at or after `byteOffset` (docs/api.md, byteOffset). */
async function fromByte(handle: FileHandle, size: number, byteOffset: number, limit: number, ended: boolean): Promise<LogChunk> {
  // Past the end: the file is not the one the offset was taken from (a new attempt's), or the offset is wrong.
  // Nothing is read, so nothing is counted: isEstimate says totalLines is not the file's.
  if (byteOffset >= size) return { ...empty, isEstimate: byteOffset > 0, nextOffset: size };
  // An offset inside a line: that line started before it, so the lines asked for start after its newline.
  let skip = 0;
  if (byteOffset > 0) {
    const before = Buffer.alloc(1);
    await handle.read(before, 0, 1, byteOffset - 1);
    if (before[0] !== NEWLINE) skip = 1;
  }
  const scan = await scanLines(blocksOf(handle, byteOffset, size), byteOffset, skip, limit, ended);
  const whole = byteOffset === 0 && !scan.more && scan.end === size;
  const read = Math.max(scan.end - byteOffset, 1);
  return {
    ...contentOf(scan),
    // Counted when the whole file was read; else estimated from the bytes read, as a large file's.
    totalLines: whole ? scan.seen : Math.max(scan.seen, estimateTotal(size, read, scan.seen)),
    hasMore: scan.more,
    isEstimate: !whole,
    nextOffset: nextOf(scan, ended),
  };
}

interface Scan {
  lines: string[];
  /** Where each kept line ends in the file: after its newline, or the file's end for a last line without one. */
  ends: number[];
  /** Where the file's last line starts, when it has no newline and was passed (kept or skipped). */
  partialStart?: number;
  /** Lines passed (skipped and kept). */
  seen: number;
  /** Where the scan stopped: after the last line passed. */
  end: number;
  /** Whether a line follows the kept ones. */
  more: boolean;
}

/**
 * Lines from `from` in `blocks` (the bytes from there on, in order): `skip` passed over, up to
 * `count` kept, each decoded whole. `withPartial`: a last line without its newline counts.
 */
async function scanLines(blocks: Iterable<Buffer> | AsyncIterable<Buffer>, from: number, skip: number, count: number, withPartial: boolean): Promise<Scan> {
  const lines: string[] = [];
  const ends: number[] = [];
  let seen = 0;
  let lineStart = from;
  let position = from;
  let pending: Buffer[] = [];
  let more = false;
  scan: for await (const block of blocks) {
    let cursor = 0;
    for (let at = block.indexOf(NEWLINE); at >= 0; at = block.indexOf(NEWLINE, cursor)) {
      if (seen >= skip) {
        if (lines.length === count) {
          more = true;
          break scan;
        }
        lines.push(pending.length === 0 ? block.toString('utf8', cursor, at) : Buffer.concat([...pending, block.subarray(cursor, at)]).toString('utf8'));
        ends.push(position + at + 1);
      }
      pending = [];
      seen++;
      cursor = at + 1;
      lineStart = position + cursor;
    }
    // The rest of the block begins a line that goes on in the next; a skipped one is not kept.
    if (cursor < block.length && seen >= skip) pending.push(Buffer.from(block.subarray(cursor)));
    position += block.length;
  }
  let partialStart: number | undefined;
  if (!more && withPartial && position > lineStart) {
    if (seen >= skip && lines.length === count) {
      more = true;
    } else {
      if (seen >= skip) {
        lines.push(Buffer.concat(pending).toString('utf8'));
        ends.push(position);
      }
      partialStart = lineStart;
      seen++;
      lineStart = position;
    }
  }
  return { lines, ends, partialStart, seen, end: lineStart, more };
}

/** The file's bytes from `from` to `size`, a block at a time (the same buffer, refilled). */
async function* blocksOf(handle: FileHandle, from: number, size: number): AsyncGenerator<Buffer> {
  const block = Buffer.alloc(Math.min(BLOCK, size - from));
  for (let position = from; position < size;) {
    const { bytesRead } = await handle.read(block, 0, Math.min(block.length, size - position), position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield block.subarray(0, bytesRead);
  }
}

function contentOf(scan: Scan): Pick<LogChunk, 'content' | 'lineCount'> {
  return { content: scan.lines.join('\n'), lineCount: scan.lines.length };
}

/** Just after the last line returned (or passed); before a last line without its newline while the file may grow. */
function nextOf(scan: Scan, ended: boolean): number {
  if (scan.partialStart !== undefined && !ended) return scan.partialStart;
  return scan.ends.at(-1) ?? scan.end;
}

function estimateTotal(size: number, sampleBytes: number, sampleLines: number): number {
  return sampleLines === 0 ? 1 : Math.max(sampleLines, Math.round((size / sampleBytes) * sampleLines));
}

async function tailOfLarge(handle: FileHandle, size: number, tail: number, ended: boolean): Promise<LogChunk> {
  const wanted = Math.min(tail, MAX_LOG_LINES);
  const blocks: Buffer[] = [];
  let position = size;
  let newlines = 0;
  // One newline more than the lines wanted marks where the first wanted line begins.
  while (position > 0 && newlines <= wanted) {
    const length = Math.min(BLOCK, position);
    position -= length;
    const block = Buffer.alloc(length);
    await handle.read(block, 0, length, position);
    blocks.unshift(block);
    for (let i = 0; i < length; i++) if (block[i] === NEWLINE) newlines++;
  }
  const data = Buffer.concat(blocks);
  // The first line is partial when the blocks begin inside the file.
  const first = position > 0 ? data.indexOf(NEWLINE) + 1 : 0;
  let count = 0;
  for (let at = data.indexOf(NEWLINE, first); at >= 0; at = data.indexOf(NEWLINE, at + 1)) count++;
  if (data[data.length - 1] !== NEWLINE) count++;
  const skip = Math.max(count - wanted, 0);
  const scan = await scanLines([data.subarray(first)], position + first, skip, wanted, true);
  return {
    ...contentOf(scan),
    totalLines: estimateTotal(size, data.length, count),
    hasMore: position > 0 || skip > 0,
    isEstimate: true,
    nextOffset: wholeEnd(data, position, size, ended),
  };
}

async function headOfLarge(handle: FileHandle, size: number, query: LogQuery, ended: boolean): Promise<LogChunk> {
  const pick = selection(query) as { start: number; count: number };
  const scan = await scanLines(blocksOf(handle, 0, size), 0, pick.start, pick.count, true);
  const counted = !scan.more && scan.end === size;
  return {
    ...contentOf(scan),
    totalLines: counted ? scan.seen : estimateTotal(size, Math.max(scan.end, 1), scan.seen),
    hasMore: scan.more,
    isEstimate: !counted,
    nextOffset: nextOf(scan, ended),
  };
}

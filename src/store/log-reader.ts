// Reads a chunk of lines from a log file. Small files are counted exactly; for large ones the
// requested lines are found by reading from the needed end only and totalLines is estimated.
import { open, type FileHandle } from 'node:fs/promises';
import { MAX_LOG_LINES, type LogChunk, type LogQuery } from '../core/index.ts';

export const DEFAULT_LINES = 1000;
/** Files up to this size are read whole and counted exactly. */
export const EXACT_LIMIT = 4 * 1024 * 1024;
const BLOCK = 64 * 1024;

const empty: LogChunk = { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false };

export async function readLogChunk(path: string, query: LogQuery): Promise<LogChunk | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return { ...empty };
    if (size <= EXACT_LIMIT) {
      const buffer = Buffer.alloc(size);
      await handle.read(buffer, 0, size, 0);
      return chunkOf(splitLines(buffer.toString('utf8')), query);
    }
    return query.tail ? await tailOfLarge(handle, size, query.tail) : await headOfLarge(handle, size, query);
  } finally {
    await handle.close();
  }
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Precedence: tail > head > offset (+limit) > the first lines (docs/api.md). */
function selection(query: LogQuery): { start: number; count: number } | { tail: number } {
  if (query.tail) return { tail: Math.min(query.tail, MAX_LOG_LINES) };
  if (query.head) return { start: 0, count: Math.min(query.head, MAX_LOG_LINES) };
  const limit = Math.min(query.limit || DEFAULT_LINES, MAX_LOG_LINES);
  return { start: Math.max((query.offset ?? 1) - 1, 0), count: limit };
}

function chunkOf(lines: string[], query: LogQuery): LogChunk {
  const pick = selection(query);
  let selected: string[];
  let hasMore: boolean;
  if ('tail' in pick) {
    selected = lines.slice(Math.max(lines.length - pick.tail, 0));
    hasMore = lines.length > pick.tail;
  } else {
    selected = lines.slice(pick.start, pick.start + pick.count);
    hasMore = pick.start + pick.count < lines.length;
  }
  return { content: selected.join('\n'), lineCount: selected.length, totalLines: lines.length, hasMore, isEstimate: false };
}

function estimateTotal(size: number, sampleBytes: number, sampleLines: number): number {
  return sampleLines === 0 ? 1 : Math.max(sampleLines, Math.round((size / sampleBytes) * sampleLines));
}

async function tailOfLarge(handle: FileHandle, size: number, tail: number): Promise<LogChunk> {
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
    for (let i = 0; i < length; i++) if (block[i] === 10) newlines++;
  }
  const data = Buffer.concat(blocks);
  let lines = splitLines(data.toString('utf8'));
  if (position > 0) lines = lines.slice(1); // the first line is partial
  const selected = lines.slice(Math.max(lines.length - wanted, 0));
  const hasMore = position > 0 || lines.length > wanted;
  return {
    content: selected.join('\n'),
    lineCount: selected.length,
    totalLines: estimateTotal(size, data.length, lines.length),
    hasMore,
    isEstimate: true,
  };
}

async function headOfLarge(handle: FileHandle, size: number, query: LogQuery): Promise<LogChunk> {
  const pick = selection(query) as { start: number; count: number };
  const selected: string[] = [];
  let lineIndex = 0;
  let carry = '';
  let position = 0;
  const block = Buffer.alloc(BLOCK);
  while (position < size && selected.length < pick.count) {
    const { bytesRead } = await handle.read(block, 0, BLOCK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const parts = (carry + block.toString('utf8', 0, bytesRead)).split('\n');
    carry = parts.pop() ?? '';
    for (const line of parts) {
      if (lineIndex >= pick.start && selected.length < pick.count) selected.push(line);
      lineIndex++;
    }
  }
  if (position >= size && carry !== '' && lineIndex >= pick.start && selected.length < pick.count) {
    selected.push(carry);
    lineIndex++;
    carry = '';
  }
  const hasMore = position < size || carry !== '' || lineIndex > pick.start + selected.length;
  return {
    content: selected.join('\n'),
    lineCount: selected.length,
    totalLines: position >= size && carry === '' ? lineIndex : estimateTotal(size, position, lineIndex),
    hasMore,
    isEstimate: !(position >= size && carry === ''),
  };
}

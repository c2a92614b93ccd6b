import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogChunk, LogQuery } from '../core/index.ts';
import { EXACT_LIMIT, readLogChunk } from './log-reader.ts';

/** A chunk without its totalLines when that is an estimate (the estimate's rule is the large files'). */
async function read(path: string, query: LogQuery): Promise<Partial<LogChunk> | undefined> {
  const chunk = await readLogChunk(path, query);
  if (!chunk?.isEstimate) return chunk;
  const { totalLines, ...rest } = chunk;
  assert.ok(totalLines >= chunk.lineCount);
  return rest;
}

async function logFile(t: { after(fn: () => Promise<void>): void }, content: string | Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-log-reader-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'x.out');
  await writeFile(path, content);
  return path;
}

test('byteOffset: the whole lines from a byte on, limit lines, and nextOffset just after the last one', async (t) => {
  const path = await logFile(t, 'one\ntwo\nthree\nfour\n');
  assert.deepEqual(await read(path, { byteOffset: 0, limit: 2 }), { content: 'one\ntwo', lineCount: 2, hasMore: true, isEstimate: true, nextOffset: 8 });
  assert.deepEqual(await read(path, { byteOffset: 8, limit: 2 }), { content: 'three\nfour', lineCount: 2, hasMore: false, isEstimate: true, nextOffset: 19 });
  // From 0 to the end: counted.
  assert.deepEqual(await readLogChunk(path, { byteOffset: 0 }), { content: 'one\ntwo\nthree\nfour', lineCount: 4, totalLines: 4, hasMore: false, isEstimate: false, nextOffset: 19 });
  // Inside a line: that line began before the offset, so the answer starts with the next one.
  assert.equal((await readLogChunk(path, { byteOffset: 5 }))?.content, 'three\nfour');
  assert.equal((await readLogChunk(path, { byteOffset: 4 }))?.content, 'two\nthree\nfour');
  // At the end, and past it: no line; a follower goes on from the file's end.
  assert.deepEqual(await read(path, { byteOffset: 19 }), { content: '', lineCount: 0, hasMore: false, isEstimate: true, nextOffset: 19 });
  assert.deepEqual(await read(path, { byteOffset: 500 }), { content: '', lineCount: 0, hasMore: false, isEstimate: true, nextOffset: 19 });
  // byteOffset wins over tail, head and offset.
  assert.equal((await readLogChunk(path, { byteOffset: 8, tail: 1, head: 1, offset: 1, limit: 1 }))?.content, 'three');
});

test('a last line without its newline: left out of a byteOffset read until the file has ended; nextOffset stays before it', async (t) => {
  const path = await logFile(t, 'one\ntwo\npart');
  assert.deepEqual(await read(path, { byteOffset: 0, ended: false }), { content: 'one\ntwo', lineCount: 2, hasMore: false, isEstimate: true, nextOffset: 8 });
  assert.deepEqual(await read(path, { byteOffset: 8, ended: false }), { content: '', lineCount: 0, hasMore: false, isEstimate: true, nextOffset: 8 });
  assert.deepEqual(await read(path, { byteOffset: 8 }), { content: 'part', lineCount: 1, hasMore: false, isEstimate: true, nextOffset: 12 });
  // The line modes show it as they always did; nextOffset does not pass it while the file may grow.
  assert.deepEqual(await readLogChunk(path, { tail: 1, ended: false }), { content: 'part', lineCount: 1, totalLines: 3, hasMore: true, isEstimate: false, nextOffset: 8 });
  assert.deepEqual(await readLogChunk(path, { offset: 2, ended: false }), { content: 'two\npart', lineCount: 2, totalLines: 3, hasMore: false, isEstimate: false, nextOffset: 8 });
  assert.equal((await readLogChunk(path, { offset: 2 }))?.nextOffset, 12);
  assert.equal((await readLogChunk(path, { offset: 9 }))?.nextOffset, 12, 'past the last line: the end');
  assert.equal((await readLogChunk(path, { offset: 9, ended: false }))?.nextOffset, 8, 'past the last line: before the one being written');
});

test('byteOffset counts the file\'s bytes, and a character across two reads of a large file stays whole', async (t) => {
  // Lines of 3-byte characters, so that some cross the 64 KiB reads; over EXACT_LIMIT, read in blocks.
  const line = 'é€'.repeat(33); // 2 + 3 bytes each: 165 bytes, plus the newline
  const count = Math.ceil(EXACT_LIMIT / 166) + 10;
  const path = await logFile(t, `${line}\n`.repeat(count));
  let next = 0;
  let seen = 0;
  for (;;) {
    const chunk = await readLogChunk(path, { byteOffset: next, limit: 10_000 });
    assert.ok(chunk);
    if (chunk.lineCount === 0) break;
    for (const text of chunk.content.split('\n')) assert.equal(text, line);
    seen += chunk.lineCount;
    assert.equal(chunk.nextOffset, seen * 166);
    next = chunk.nextOffset;
  }
  assert.equal(seen, count);
  const middle = await readLogChunk(path, { offset: 400, limit: 2 });
  assert.deepEqual([middle?.content, middle?.nextOffset], [`${line}\n${line}`, 401 * 166]);
  const tail = await readLogChunk(path, { tail: 1 });
  assert.deepEqual([tail?.content, tail?.nextOffset], [line, count * 166]);
});

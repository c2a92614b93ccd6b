import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogFiles } from '../store/index.ts';
import { OutputTail } from './output-tail.ts';
import { LOG_PAGE_LINES, type LogPageQuery } from './backend/types.ts';

/** A log file the test writes as a step would, read through the store's reader as the step log endpoint reads it. */
async function stepLog(t: { after(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-tail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'run.out');
  await writeFile(path, '');
  const logs = new LogFiles(dir);
  const state = { ended: false };
  const asked: LogPageQuery[] = [];
  const shown: string[] = [];
  const tail = new OutputTail(async (query) => {
    asked.push(query);
    const page = await logs.read(path, { ...query, limit: LOG_PAGE_LINES, ended: state.ended });
    assert.ok(page);
    return page;
  }, (text) => shown.push(text));
  return { path, state, asked, shown, tail, size: async () => (await stat(path)).size };
}

test('each poll reads the whole lines from where the last one ended: only the bytes written since', async (t) => {
  const log = await stepLog(t);
  const offsetsOfPoll = async () => {
    log.asked.length = 0;
    await log.tail.poll(false);
    return log.asked.flatMap((query) => ('byteOffset' in query ? [query.byteOffset] : []));
  };
  await appendFile(log.path, 'one\ntwo\n');
  assert.deepEqual(await offsetsOfPoll(), [0]);
  await appendFile(log.path, 'three\n');
  assert.deepEqual(await offsetsOfPoll(), [8]);
  assert.deepEqual(await offsetsOfPoll(), [14]);
  assert.equal(await log.size(), 14);
  assert.deepEqual(log.shown, ['one\ntwo', 'three'], 'each line once');
});

test('a line still being written is shown once it has stayed the same, then its continuation as a line; the last line once the step ends', async (t) => {
  const log = await stepLog(t);
  await appendFile(log.path, 'first\nContinue? ');
  await log.tail.poll(false);
  await log.tail.poll(false);
  assert.deepEqual(log.shown, ['first'], 'held while it may still change');
  await log.tail.poll(false);
  assert.deepEqual(log.shown, ['first', 'Continue? '], 'shown once it stayed the same');
  await log.tail.poll(false);
  await appendFile(log.path, 'yes\nfirst');
  await log.tail.poll(false);
  await log.tail.poll(false);
  // A new line being written ("first" again, without newline): held.
  assert.deepEqual(log.shown, ['first', 'Continue? ', 'yes']);
  log.state.ended = true;
  await log.tail.poll(true);
  assert.deepEqual(log.shown, ['first', 'Continue? ', 'yes', 'first']);
});

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDEMPOTENCY_WINDOW_MS, ManualClock, type StoredAnswer } from '../core/index.ts';
import { LmdbRunStore } from './lmdb-run-store.ts';
import { LmdbIdempotencyStore } from './lmdb-idempotency-store.ts';

const DAY = IDEMPOTENCY_WINDOW_MS;

async function openStores(t: TestContext, clock: ManualClock) {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-idem-'));
  const opened = { runs: new LmdbRunStore(dir), answers: undefined as unknown as LmdbIdempotencyStore };
  opened.answers = new LmdbIdempotencyStore(opened.runs.environment, dir, clock);
  t.after(async () => {
    await opened.answers.close();
    await opened.runs.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    opened,
    reopen: async () => {
      await opened.answers.close();
      await opened.runs.close();
      opened.runs = new LmdbRunStore(dir);
      opened.answers = new LmdbIdempotencyStore(opened.runs.environment, dir, clock);
    },
  };
}

const answer = (storedAtMs: number, dagRunId = 'r1'): StoredAnswer => ({ fingerprint: 'f', status: 200, body: { dagRunId }, storedAtMs });

test('an answer is read back from the put on, and after a reopen', async (t) => {
  const clock = new ManualClock(10 * DAY);
  const { opened, reopen } = await openStores(t, clock);
  const put = opened.answers.put('user:1', 'k', answer(clock.now()));
  // Before its commit: a repeat arriving meanwhile must find it.
  assert.deepEqual(opened.answers.get('user:1', 'k', 0), answer(clock.now()));
  await put;
  assert.equal(opened.answers.get('user:2', 'k', 0), undefined, 'scopes are apart');
  await reopen();
  assert.deepEqual(opened.answers.get('user:1', 'k', 0), answer(clock.now()));
  assert.equal(opened.answers.get('user:1', 'k', clock.now() + 1), undefined, 'stored before sinceMs: not returned');
});

test('the sweep removes the answers past the window, in batches, and keeps the newer answer of a key used again', async (t) => {
  const clock = new ManualClock(10 * DAY);
  const { opened } = await openStores(t, clock);
  const start = clock.now();
  await Promise.all(Array.from({ length: 1_200 }, (_, i) => opened.answers.put('', `old-${i}`, answer(start))));
  await opened.answers.put('', 'again', answer(start));
  clock.advanceTo(start + DAY + 1);
  await opened.answers.put('', 'fresh', answer(clock.now()));
  // Used again past its window: the newer answer replaces the old one, whose time entry remains.
  await opened.answers.put('', 'again', answer(clock.now(), 'r2'));
  assert.equal(await opened.answers.sweep(), 1_200);
  for (const i of [0, 599, 1_199]) assert.equal(opened.answers.get('', `old-${i}`, 0), undefined);
  assert.deepEqual(opened.answers.get('', 'again', 0), answer(clock.now(), 'r2'));
  assert.deepEqual(opened.answers.get('', 'fresh', 0), answer(clock.now()));
  assert.equal(await opened.answers.sweep(), 0);
});

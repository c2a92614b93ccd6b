import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLine } from '../core/index.ts';
import { followLog } from './log-follower.ts';

/** The follower's timers and watch do not hold the process open (a server does): the test does. */
function keepAlive(t: { after(fn: () => void): void }): void {
  const timer = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(timer));
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-follow-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a file that does not exist yet is waited for, followed as it grows, and its last line given once the writer is done', async (t) => {
  keepAlive(t);
  const path = join(await tempDir(t), 'step.out');
  const lines: LogLine[] = [];
  const ended = new Promise<number>((resolve) => {
    const follow = followLog(path, {
      from: 0, pollMs: 20,
      lines: (batch) => {
        lines.push(...batch);
        return true;
      },
      ended: resolve,
    });
    void (async () => {
      await writeFile(path, 'one\ntw');
      await until(() => lines.length >= 1);
      // Only whole lines while the writer goes on: a few polls later, still one.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(lines, [{ text: 'one', end: 4 }]);
      await appendFile(path, 'o\nthree');
      await until(() => lines.length >= 2);
      follow.finish();
    })();
  });
  assert.equal(await ended, 13);
  assert.deepEqual(lines, [{ text: 'one', end: 4 }, { text: 'two', end: 8 }, { text: 'three', end: 13 }]);
});

test('a reader that is behind is given nothing more until it resumes', async (t) => {
  keepAlive(t);
  const path = join(await tempDir(t), 'big.out');
  const line = `${'x'.repeat(99)}\n`;
  await writeFile(path, line.repeat(2000));
  let given = 0;
  let pausedAt = -1;
  const ended = new Promise<number>((resolve, reject) => {
    const follow = followLog(path, {
      from: 0, pollMs: 5, failed: reject,
      lines: (batch) => {
        assert.equal(pausedAt, -1, 'no lines while paused');
        given += batch.length;
        if (given < 2000) {
          pausedAt = given;
          // Polls come meanwhile; the reader resumes a while later.
          setTimeout(() => {
            pausedAt = -1;
            follow.resume();
          }, 30);
          return false;
        }
        return true;
      },
      ended: resolve,
    });
    follow.finish();
  });
  assert.equal(await ended, 200_000);
  assert.equal(given, 2000);
});

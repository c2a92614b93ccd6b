import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { AppError } from '../core/index.ts';
import { isStorageFull, lmdbWrite, storageError } from './storage-full.ts';

const errno = (code: string | number, message = 'failed') => Object.assign(new Error(message), { code });

test('a write the disk had no room for is insufficient_storage naming what and where; other errors pass unchanged', () => {
  for (const code of ['ENOSPC', 28, 'EDQUOT', 122, -30792]) {
    const error = storageError(errno(code), 'DAG x', '/home/dags');
    assert.ok(error instanceof AppError && error.code === 'insufficient_storage', String(code));
    assert.match(error.message, /^cannot store DAG x: the file system of \/home\/dags is full \(/);
  }
  const other = errno('EACCES');
  assert.equal(storageError(other, 'DAG x', '/home/dags'), other);
  // A short write (EIO from LMDB) is a full disk only when the file system is nearly full: this one is not.
  const short = errno(5, 'Input/output error');
  assert.equal(isStorageFull(short, tmpdir()), false);
  assert.equal(storageError(short, 'the record', tmpdir()), short);
});

test('a failed LMDB commit is reported with its cause, which is handled', async () => {
  const cause = errno(28, 'No space left on device');
  const commitError = Promise.reject(cause);
  const failed = Promise.reject(Object.assign(new Error('Commit failed (see commitError for details)'), { commitError }));
  await assert.rejects(lmdbWrite(failed, 'the record of dag-run r of DAG d', '/home/data'), (error: unknown) => {
    assert.ok(error instanceof AppError);
    assert.equal(error.code, 'insufficient_storage');
    assert.match(error.message, /^cannot store the record of dag-run r of DAG d: the file system of \/home\/data is full \(no space left\)/);
    return true;
  });
});

test('a failed LMDB commit whose cause never arrives is judged by the room left on its file system', async () => {
  const pending = () => Object.assign(new Error('Commit failed (see commitError for details)'), { commitError: new Promise(() => undefined) });
  // tmpdir has room: the failure is not a full disk, and passes unchanged once the cause is given up on.
  const failure = pending();
  await assert.rejects(lmdbWrite(Promise.reject(failure), 'the record', tmpdir()), (error: unknown) => error === failure);
  assert.equal(isStorageFull(pending(), tmpdir()), false);
});

// Recognises a write that the file system (or LMDB's map) had no room for and says so as
// AppError('insufficient_storage'), naming what could not be stored and where; other errors pass
// unchanged. Also the one way the stores hand a write to LMDB: its failure is always handled.
import { statfsSync } from 'node:fs';
import { AppError } from '../core/index.ts';

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
/** lmdb-js reports errno values and its own as a numeric `code`: ENOSPC (28), EDQUOT (122), MDB_MAP_FULL. */
const FULL_NUMBERS = new Set([28, 122, -30792]);

/**
 * A write that ended short: LMDB reports EIO when the disk filled in the middle of its write.
 * Taken for a full disk when the file system has less than this left afterwards.
 */
const NEARLY_FULL_BYTES = 1 << 20;

export function isStorageFull(error: unknown, where?: string): boolean {
  if (error instanceof AppError) return error.code === 'insufficient_storage';
  const code = (error as { code?: unknown } | undefined)?.code;
  if ((typeof code === 'string' && FULL_CODES.has(code)) || (typeof code === 'number' && FULL_NUMBERS.has(code))) return true;
  return (code === 5 || code === 'EIO' || isBareCommitFailure(error)) && where !== undefined && freeBytes(where) < NEARLY_FULL_BYTES;
}

/**
 * lmdb-js's "Commit failed" whose cause never arrived: it rejects the cause only when the writer
 * thread's callback reports the failure, which can come after the writes were rejected, or not
 * at all for a batch whose failure a later write found. Judged, like EIO, by the room left.
 */
function isBareCommitFailure(error: unknown): boolean {
  return (error as { commitError?: unknown } | undefined)?.commitError instanceof Promise;
}

function freeBytes(where: string): number {
  try {
    const stats = statfsSync(where);
    return stats.bavail * stats.bsize;
  } catch {
    return Infinity;
  }
}

/** `error` as insufficient_storage when the file system of `where` was full; else `error` itself. */
export function storageError(error: unknown, what: string, where: string): unknown {
  if (error instanceof AppError || !isStorageFull(error, where)) return error;
  const code = (error as { code?: unknown }).code;
  const reason = code === -30792 ? 'the LMDB map is full' : code === 122 || code === 'EDQUOT' ? 'the disk quota is used up' : 'no space left';
  return new AppError('insufficient_storage', `cannot store ${what}: the file system of ${where} is full (${reason}); nothing was changed, try again once space is freed`);
}

/** How long a failed commit's cause is waited for before the failure is judged without it. */
const CAUSE_WAIT_MS = 50;

/**
 * lmdb-js rejects the writes of a failed commit with "Commit failed" and keeps the cause in
 * `commitError`, a promise rejected beside it that nobody else handles: unhandled, it ended the
 * process. It is read here, once it has settled (it usually settles in the same callback; when it does not, isStorageFull judges by the room left).
 */
function causeOf(error: unknown): Promise<unknown> {
  const commitError = (error as { commitError?: unknown } | undefined)?.commitError;
  if (!(commitError instanceof Promise)) return Promise.resolve(error);
  return Promise.race([
    commitError.then(() => error, (cause: unknown) => cause),
    new Promise((resolve) => setTimeout(() => resolve(error), CAUSE_WAIT_MS)),
  ]);
}

/** An LMDB write whose failure its caller hears, as insufficient_storage when the disk was full. */
export function lmdbWrite<T>(write: Promise<T>, what: string, where: string): Promise<T> {
  return write.then(undefined, async (error: unknown) => {
    throw storageError(await causeOf(error), what, where);
  });
}

let lastAlongside: unknown;

/**
 * A write of a transaction whose outcome another of its writes reports (lmdbWrite): only its
 * rejection is handled here. Writes inside transactionSync return no promise.
 */
export function alongside(write: unknown): void {
  // lmdb-js answers the plain writes of one transaction with one promise: a run's first record
  // of 10,000 nodes handled the same promise's rejection 10,000 times.
  if (write === lastAlongside) return;
  lastAlongside = write;
  if (write instanceof Promise) write.catch((error: unknown) => void causeOf(error));
}

/** The LMDB environments open in this process: where a failed commit's cause is looked for. */
const guardedPaths = new Set<string>();

/**
 * lmdb-js starts each batch of a tick with a write of its own whose promise nobody holds: when the
 * batch's commit fails (a full disk) that promise, and the cause beside it, reject unhandled, and
 * Node ends the process. Those two are let pass here (the writes of the batch report the failure
 * to their callers); any other unhandled rejection ends the process as before, unless the process
 * listens for them itself.
 */
export function letCommitFailuresPass(path: string, onPassed: (error: unknown) => void): void {
  if (guardedPaths.size === 0) {
    process.on('unhandledRejection', (reason) => {
      const commitError = (reason as { commitError?: unknown } | undefined)?.commitError;
      if (commitError instanceof Promise) {
        commitError.catch(() => undefined);
        return;
      }
      if ([...guardedPaths].some((where) => isStorageFull(reason, where))) {
        onPassed(reason);
        return;
      }
      if (process.listenerCount('unhandledRejection') > 1) return;
      throw reason;
    });
  }
  guardedPaths.add(path);
}

// The end of what a failed execution wrote to its stderr log, added to its error as Dagu adds it.
// Read from the log file, which holds the output already masked, and only once a step has failed:
// a step that succeeds pays nothing for it.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { withStderrTailText } from '../core/index.ts';

/** As much of a failed execution's stderr as Dagu keeps for its error. */
export const STDERR_TAIL_BYTES = 1024;

/**
 * `error` followed by the last bytes (at most 1024) of the `written` bytes this execution appended
 * to the stderr log at `path`, cut where they fall (mid-line, as Dagu cuts them); `error` alone
 * when the execution wrote nothing there or the log cannot be read.
 */
export function withStderrTail(error: string, path: string | undefined, written: number): string {
  if (path === undefined || written <= 0) return error;
  const tail = readTail(path, Math.min(written, STDERR_TAIL_BYTES));
  return withStderrTailText(error, tail);
}

function readTail(path: string, length: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const take = Math.min(length, size);
    const buffer = Buffer.alloc(take);
    let read = 0;
    while (read < take) {
      const bytes = readSync(fd, buffer, read, take - read, size - take + read);
      if (bytes === 0) break;
      read += bytes;
    }
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    // A log that cannot be read (a full disk lost it): the error goes without it.
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

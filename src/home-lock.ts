// One process owns a home: a lock file in its data folder, taken before the store opens, released
// at close, and taken over when the process that holds it is gone (a crash, kill -9). The server,
// the command line and embedders all take it (openEngine), so two of them never share LMDB, the
// step registry or the queues.
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isSameProcess, processStat } from './executors/index.ts';
import { isStorageFull, storageError } from './store/index.ts';

interface Holder {
  pid: number;
  /** The holder's start time (/proc), so that a pid reused by another process is not taken for it. */
  startTime: number;
  host: string;
  startedAt: string;
  /** Where the holder's API listens, once it does (a server); the command talks to it there. */
  url?: string;
}

/** The process that holds a home, while it runs. */
export type HomeHolder = Readonly<Holder>;

export class HomeInUseError extends Error {}

export class HomeLock {
  /** The home's file system was full when the lock was taken: the reserve's room went to the lock. */
  reserveGivenUp = false;

  private constructor(private readonly path: string, private readonly holder: Holder) {}

  /** Takes the lock of the home whose data folder is `dataDir`; throws HomeInUseError naming the holder. */
  static acquire(dataDir: string): HomeLock {
    const path = join(dataDir, 'troupe.lock');
    const holder: Holder = { pid: process.pid, startTime: processStat(process.pid)?.startTime ?? 0, host: hostname(), startedAt: new Date().toISOString() };
    // Twice at most: a lock left by a process that is gone is removed, then taken.
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(path, 'wx', 0o600);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const current = readHolder(path);
        if (current && holds(current)) {
          throw new HomeInUseError(`the home whose data is ${dataDir} is in use by troupe process ${current.pid} on ${current.host}, running since ${current.startedAt}: stop it, or give this one another --home`);
        }
        unlinkQuietly(path);
        continue;
      }
      let reserveGivenUp = false;
      try {
        try {
          writeSync(fd, `${JSON.stringify(holder)}\n`);
        } catch (error) {
          // A full disk: the room kept in the reserve is given up for the lock, so that the home
          // still opens (reads answer, writes say the disk is full) instead of not starting at all.
          if (!isStorageFull(error) || !giveUpReserve(dataDir)) throw error;
          reserveGivenUp = true;
          writeSync(fd, `${JSON.stringify(holder)}\n`);
        }
      } catch (error) {
        // An empty lock is nobody's: another process would take it over. With no room even for
        // the lock, no process can hold the home, and the command says so instead of failing at
        // its first write.
        unlinkQuietly(path);
        throw storageError(error, 'the lock of the home', dataDir);
      } finally {
        closeSync(fd);
      }
      const lock = new HomeLock(path, holder);
      lock.reserveGivenUp = reserveGivenUp;
      if (!reserveGivenUp) keepReserve(dataDir);
      return lock;
    }
    throw new HomeInUseError(`the home whose data is ${dataDir} was taken by another troupe process while this one started`);
  }

  /** The live holder of the home whose data folder is `dataDir`, if any. */
  static holder(dataDir: string): HomeHolder | undefined {
    const current = readHolder(join(dataDir, 'troupe.lock'));
    return current && holds(current) ? current : undefined;
  }

  /** Records where this process's API listens, for the command to find it (HomeLock.holder). */
  announce(url: string): void {
    this.holder.url = url;
    // Written beside and renamed over: a reader never sees the lock file missing or half-written.
    const next = `${this.path}.${process.pid}`;
    const text = `${JSON.stringify(this.holder)}\n`;
    try {
      writeFileSync(next, text, { mode: 0o600 });
      renameSync(next, this.path);
    } catch (error) {
      unlinkQuietly(next);
      if (!isStorageFull(error)) throw error;
      // No room for a new file: the lock's own block, written when the lock was taken, has room
      // for the address. A reader that meets the write half done takes the lock for unreadable, as
      // it does one whose writer died between create and write.
      const fd = openSync(this.path, 'r+');
      try {
        writeSync(fd, text, 0);
      } finally {
        closeSync(fd);
      }
    }
  }

  /** Gives the lock up, if it is still this process's. */
  release(): void {
    const current = readHolder(this.path);
    if (current?.pid === this.holder.pid && current.startTime === this.holder.startTime) unlinkQuietly(this.path);
  }
}

function readHolder(path: string): Holder | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return typeof value.pid === 'number' && typeof value.startTime === 'number' ? (value as Holder) : undefined;
  } catch {
    // Unreadable or half-written (its writer died between create and write): nobody holds it.
    return undefined;
  }
}

/** Whether the holder still runs: this machine's process with that pid and start time. */
function holds(holder: Holder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return true;
  return isSameProcess(holder.pid, holder.startTime);
}

/**
 * A file of zeros kept beside the lock while there is room, and given up when the disk is full and
 * the lock cannot be written otherwise (a server restarted on a full disk). Made again at a later
 * start with room.
 */
const RESERVE_FILE = 'troupe.reserve';
const RESERVE_BYTES = 64 * 1024;

function keepReserve(dataDir: string): void {
  const path = join(dataDir, RESERVE_FILE);
  try {
    writeFileSync(path, Buffer.alloc(RESERVE_BYTES), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    // There already, or no room for it now: it is made at a later start.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') unlinkQuietly(path);
  }
}

function giveUpReserve(dataDir: string): boolean {
  try {
    unlinkSync(join(dataDir, RESERVE_FILE));
    return true;
  } catch {
    return false;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

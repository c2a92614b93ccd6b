// Follows a log file as it grows (LogStore.follow): a watch on the file (on its folder until it
// exists), a slow poll besides, since a watch can miss changes (network file systems, a watch
// that could not be set), and reads of 64 KiB from where the last one stopped. Never reads ahead
// of a reader that is behind.
import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { LogLineSplitter, type LogFollow, type LogFollowOptions } from '../core/index.ts';

const READ_BYTES = 64 * 1024;
const POLL_MS = 500;

export function followLog(path: string, options: LogFollowOptions): LogFollow {
  const follower = new LogFollower(path, options);
  follower.start();
  return follower;
}

class LogFollower implements LogFollow {
  private readonly splitter: LogLineSplitter;
  /** The next byte of the file to read. */
  private position: number;
  private handle: FileHandle | undefined;
  private watcher: FSWatcher | undefined;
  private watchingFile = false;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  /** Something changed while a read was under way: it reads on past where it found the end. */
  private again = false;
  private paused = false;
  private finishing = false;
  private done = false;
  private readonly buffer = Buffer.allocUnsafe(READ_BYTES);
  /** The open last line as last told to `open`. */
  private toldOpen = '';

  constructor(private readonly path: string, private readonly options: LogFollowOptions) {
    this.position = options.from;
    this.splitter = new LogLineSplitter(options.from);
  }

  start(): void {
    this.watch();
    this.timer = setInterval(() => this.read(), this.options.pollMs ?? POLL_MS).unref();
    this.read();
  }

  resume(): void {
    if (this.done || !this.paused) return;
    this.paused = false;
    this.read();
  }

  finish(): void {
    if (this.done) return;
    this.finishing = true;
    this.read();
  }

  close(): void {
    this.stop();
  }

  private read(): void {
    if (this.done || this.paused) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    this.again = false;
    this.drain().then(() => {
      this.reading = false;
      // A resume heard while the last read was still settling.
      if (this.again) this.read();
    }, (error: Error) => {
      this.reading = false;
      this.stop();
      this.options.failed?.(error);
    });
  }

  /** Reads to the end of what is written, unless the reader falls behind or leaves. */
  private async drain(): Promise<void> {
    for (;;) {
      const handle = this.handle ?? await this.openFile();
      if (this.done) return;
      if (handle) {
        const { bytesRead } = await handle.read(this.buffer, 0, READ_BYTES, this.position);
        if (this.done) return;
        if (bytesRead > 0) {
          this.position += bytesRead;
          const lines = this.splitter.push(this.buffer.subarray(0, bytesRead));
          if (lines.length > 0) this.toldOpen = '';
          if (lines.length > 0 && !this.options.lines(lines) && !this.done) {
            this.paused = true;
            return;
          }
          if (this.done) return;
          continue;
        }
      }
      if (this.again) {
        this.again = false;
        continue;
      }
      if (this.finishing) return this.end();
      this.tellOpen();
      return;
    }
  }

  /** At the end of what is written: the last line so far, when it has no line break yet and grew. */
  private tellOpen(): void {
    if (!this.options.open) return;
    const open = this.splitter.open;
    if (open === '' || open === this.toldOpen) return;
    this.toldOpen = open;
    this.options.open(open);
  }

  /** The file, once it exists; undefined before. */
  private async openFile(): Promise<FileHandle | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    if (this.done) {
      await handle.close();
      return undefined;
    }
    this.handle = handle;
    if (!this.watchingFile) this.watch();
    return handle;
  }

  /** A watch on the file, or on its folder while the file is not there yet; none at all leaves the poll. */
  private watch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchingFile = false;
    try {
      this.watcher = watch(this.path, { persistent: false }, () => this.read());
      this.watchingFile = true;
    } catch {
      try {
        const name = basename(this.path);
        this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
          if (file === null || file === name) this.read();
        });
      } catch {
        return;
      }
    }
    this.watcher.on('error', () => {
      this.watcher?.close();
      this.watcher = undefined;
      this.watchingFile = false;
    });
  }

  private end(): void {
    const last = this.splitter.end();
    if (last) this.position = last.end;
    const { lines, ended } = this.options;
    this.stop();
    if (last) lines([last]);
    ended(this.position);
  }

  private stop(): void {
    if (this.done) return;
    this.done = true;
    clearInterval(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
    this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }
}

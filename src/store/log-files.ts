// LogStore: the layout of the log directory, the run log writer, the chunk reader and the follower.
import { closeSync, mkdirSync, open, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileSafe, type LogChunk, type LogFollow, type LogFollowOptions, type LogQuery, type LogStore, type StepLogPaths } from '../core/index.ts';
import { followLog } from './log-follower.ts';
import { readLogChunk } from './log-reader.ts';
import { log as serverLog } from '../logging/index.ts';
import { storageError } from './storage-full.ts';

interface RunLog {
  fd?: number;
  failed?: boolean;
  /** Set once the file is being created; settles when it is open (or could not be). */
  opened?: Promise<void>;
  /** Creates the file if the run is still going after CREATE_AFTER_MS. */
  timer?: NodeJS.Timeout;
  lines: string[];
}

/**
 * A run's log file is created when the run ends, when someone reads the log, or this long after its
 * first line, whichever comes first. Creating a file costs 0.1 to 0.8 ms of kernel time on ext4
 * (measured), and a run's first step starts in the same moment: on a 2-core machine the step's
 * posix_spawn waited for it (0.50-0.91 ms p50, 0.26-0.27 without the create; one-step runs,
 * measured 2026-11-21). Until then the lines wait in memory: a crash of the server within this
 * time loses them (never the run, which is in the store).
 */
const CREATE_AFTER_MS = 20;

/**
 * What follows `<dagRunId>.` in the name of an attempt's file (runLogPath, stepPaths): attempt ids
 * are 6 hex digits (core/ids.ts), a step's files carry its 3-digit index (000: a handler).
 */
export const ATTEMPT_FILE_TAIL = /^[0-9a-f]{6}\.(?:run\.log|\d{3}\.[A-Za-z0-9_.-]+\.(?:out|err|script))$/;

/** A step's script file, beside its stdout (stepPaths). */
export const scriptPathOf = (stdout: string) => stdout.replace(/\.out$/, '.script');

export class LogFiles implements LogStore {
  /** Open run logs by path, with the lines waiting to be written (in call order). */
  private readonly runLogs = new Map<string, RunLog>();
  private lastPrefix?: { name: string; dagRunId: string; attemptId: string; logDir?: string; prefix: string };
  /**
   * Creations waiting by directory, the one under way first. The kernel creates one file at a time
   * in a directory (it holds the directory's lock), so creations in parallel on the thread pool do
   * not go faster: the threads that wait spin on the lock, and on ext4 without a journal creating
   * a file costs 0.05 - 1.1 ms of kernel time (measured; more while many files deleted in the last
   * minutes sit in the inode table). Spinning on 4 pool threads took a core from the main thread
   * and the steps (perf, 200-run throughput: a quarter of the threads' creation time).
   */
  private readonly creating = new Map<string, Array<() => void>>();
  private flushScheduled = false;

  constructor(readonly dir: string) {}

  /**
   * One folder per DAG, created with its first run; a run's files carry its id and attempt id.
   * Creating a folder costs up to 0.8 ms on some file systems (measured), and a run needs none.
   * A DAG with its own `logDir` keeps its folder there instead.
   */
  dagDir(name: string, logDir?: string): string {
    // Names and ids are validated before they get here; fileSafe is a second fence.
    return join(logDir ?? this.dir, fileSafe(name));
  }

  runLogPath(name: string, dagRunId: string, attemptId: string, logDir?: string): string {
    return join(this.dagDir(name, logDir), `${fileSafe(dagRunId)}.${fileSafe(attemptId)}.run.log`);
  }

  stepPaths(name: string, dagRunId: string, attemptId: string, index: number, stepName: string, logDir?: string): StepLogPaths {
    const base = `${this.attemptPrefix(name, dagRunId, attemptId, logDir)}${String(index + 1).padStart(3, '0')}.${fileSafe(stepName)}`;
    return { stdout: `${base}.out`, stderr: `${base}.err`, script: `${base}.script` };
  }

  /**
   * `<dag dir>/<dagRunId>.<attemptId>.`, the start of every file of an attempt: a run's steps ask
   * one after another, so the last one is kept (a plan of 10,000 steps joined it 10,000 times).
   * What follows it holds no separator (fileSafe), so appending is the join.
   */
  private attemptPrefix(name: string, dagRunId: string, attemptId: string, logDir?: string): string {
    const last = this.lastPrefix;
    if (last && last.name === name && last.dagRunId === dagRunId && last.attemptId === attemptId && last.logDir === logDir) return last.prefix;
    const prefix = join(this.dagDir(name, logDir), `${fileSafe(dagRunId)}.${fileSafe(attemptId)}.`);
    this.lastPrefix = { name, dagRunId, attemptId, logDir, prefix };
    return prefix;
  }

  prepare(name: string, logDir?: string): void {
    // Once the folder exists this is one mkdir that answers EEXIST: microseconds.
    try {
      mkdirSync(this.dagDir(name, logDir), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw storageError(error, `the log folder of DAG ${name}`, logDir ?? this.dir);
    }
  }

  appendRunLog(path: string, line: string): void {
    let log = this.runLogs.get(path);
    if (!log) {
      log = this.pendingRunLog(path);
      this.runLogs.set(path, log);
    }
    if (log.failed) return;
    log.lines.push(line);
    if (log.fd !== undefined && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  async closeRunLog(path: string): Promise<void> {
    const log = this.runLogs.get(path);
    if (!log) return;
    await this.openRunLog(path, log);
    // A second close of the same log (a recovery and a run's end) must not close a reused number.
    if (this.runLogs.get(path) !== log) return;
    this.runLogs.delete(path);
    if (log.fd === undefined) return;
    this.write(log);
    closeSync(log.fd);
    log.fd = undefined;
  }

  /** A log whose file is not created yet (see CREATE_AFTER_MS). */
  private pendingRunLog(path: string): RunLog {
    const log: RunLog = { lines: [] };
    log.timer = setTimeout(() => void this.openRunLog(path, log), CREATE_AFTER_MS).unref();
    return log;
  }

  /** The file is created on the thread pool, once, after the creations queued in its directory; the lines wait for it. */
  private openRunLog(path: string, log: RunLog): Promise<void> {
    clearTimeout(log.timer);
    log.opened ??= new Promise<void>((resolve) => {
      const create = () => open(path, 'a', 0o600, (error, fd) => {
        if (error) {
          serverLog.error({ path, error: error.message }, 'cannot write a run log');
          log.lines = [];
          log.failed = true;
        } else {
          log.fd = fd;
          this.write(log);
        }
        resolve();
        this.createNext(dir);
      });
      const dir = dirname(path);
      const queue = this.creating.get(dir);
      if (queue) {
        queue.push(create);
      } else {
        this.creating.set(dir, [create]);
        create();
      }
    });
    return log.opened;
  }

  /** The creation under way in `dir` is done: starts the next one queued there. */
  private createNext(dir: string): void {
    const queue = this.creating.get(dir)!;
    queue.shift();
    if (queue.length === 0) this.creating.delete(dir);
    else queue[0]();
  }

  /** Writes each open run log's waiting lines, once per tick. */
  private flush(): void {
    this.flushScheduled = false;
    for (const log of this.runLogs.values()) if (log.fd !== undefined) this.write(log);
  }

  private write(log: RunLog): void {
    if (log.lines.length === 0 || log.fd === undefined) return;
    const text = `${log.lines.join('\n')}\n`;
    log.lines = [];
    try {
      // A short write (a disk filling up) is followed by one that throws: no line is lost unsaid.
      const bytes = Buffer.from(text);
      for (let offset = 0; offset < bytes.length;) offset += writeSync(log.fd, bytes, offset);
    } catch (error) {
      serverLog.error({ error: (error as Error).message }, 'cannot write a run log');
    }
  }

  async read(path: string, query: LogQuery): Promise<LogChunk | undefined> {
    // A running run's log may still be waiting in memory: it is written out first.
    const log = this.runLogs.get(path);
    if (log) {
      await this.openRunLog(path, log);
      this.write(log);
    }
    return readLogChunk(path, query);
  }

  /** Step logs only: a run's log is written from memory in batches, and read whole by `read`. */
  follow(path: string, options: LogFollowOptions): LogFollow {
    return followLog(path, options);
  }
}

// The log files, captured output and stop handling of an executor that runs in the worker thread
// itself (no process): the same observable behaviour as a shell step's (shell.executor.ts).
import { constants as osConstants } from 'node:os';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { LineMasker, createMasker, type StepResult } from '../core/index.ts';
import type { ControlMessage, WorkerTask } from './protocol.ts';
import { workerLog } from '../logging/worker-log.ts';

/** One log file and its copy (the definition's `stdout`/`stderr` field); writes apply in order. */
class LogStream {
  private queue: Promise<void> = Promise.resolve();
  private readonly masker: LineMasker | undefined;
  /** Why output was lost, if it was (a full disk). */
  failure: string | undefined;

  constructor(private readonly paths: Array<string | undefined>, mask: ((text: string) => string) | undefined) {
    this.masker = mask ? new LineMasker(mask) : undefined;
  }

  write(text: string): void {
    this.append(this.masker ? this.masker.push(text) : text);
  }

  /** `create`: the step's own log file exists afterwards, though nothing was written (a stdout log, as Dagu's). */
  async close(create = false): Promise<void> {
    if (this.masker) this.append(this.masker.end());
    if (create && !this.appended && this.paths[0] !== undefined) {
      const path = this.paths[0];
      // Nothing was written, so nothing is lost when the empty file cannot be made (a full disk):
      // the step does not fail for it.
      this.queue = this.queue.then(async () => {
        await appendToLogs([path], '', true);
      });
    }
    await this.queue;
  }

  private appended = false;

  private append(text: string): void {
    if (text === '') return;
    this.appended = true;
    this.queue = this.queue.then(async () => {
      const failure = await appendToLogs(this.paths, text);
      this.failure ??= failure;
    });
  }
}

/** The step's error when its output could not be written to `path`. */
export function stepLogFailure(path: string, error: unknown): string {
  return `cannot write the step log ${path}: ${(error as Error).message}`;
}

/**
 * Appends `text` to each log file named (the step's log and its copy); one that cannot be written
 * is logged, and the step goes on. Resolves with why output was lost, if it was. `create`: an empty
 * `text` still creates the files.
 */
export async function appendToLogs(paths: Array<string | undefined>, text: string, create = false): Promise<string | undefined> {
  if (text === '' && !create) return undefined;
  let failure: string | undefined;
  for (const path of paths) {
    if (path === undefined) continue;
    try {
      // A definition's output file may name a folder that does not exist yet.
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await appendFile(path, text, { mode: 0o600 });
    } catch (error) {
      // The step goes on; its output is lost, and the server's log says why.
      failure ??= stepLogFailure(path, error);
      workerLog('error', { path: path, error: (error as Error).message }, 'cannot write a step log');
    }
  }
  return failure;
}

export class StepOutput {
  readonly mask: (text: string) => string;
  private readonly out: LogStream;
  private readonly err: LogStream;
  private readonly kept: Buffer[] = [];
  // A character split across two chunks of a response or an archive entry is written whole.
  private readonly decoder = new StringDecoder('utf8');
  private keptBytes = 0;
  private overflow = false;
  private stopMessage: ControlMessage | undefined;
  private readonly abort = new AbortController();
  private readonly listener = (message: ControlMessage) => {
    if (message.type !== 'stop') return;
    this.stopMessage ??= message;
    this.abort.abort(new Error(`signal: ${message.signal}`));
  };

  constructor(private readonly task: WorkerTask) {
    const masker = task.secrets.length > 0 ? createMasker(task.secrets) : undefined;
    this.mask = masker ?? ((text) => text);
    this.out = new LogStream([task.stdoutPath, task.stdoutCopy], masker);
    this.err = new LogStream([task.stderrPath, task.stderrCopy], masker);
    // Heard from the start: a stop that comes before the work begins is not lost.
    task.port.on('message', this.listener);
  }

  /** Aborted by a stop message. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get stopped(): boolean {
    return this.stopMessage !== undefined;
  }

  stdout(data: string | Buffer): void {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    if (this.task.captureOutput && !this.overflow) {
      this.keptBytes += bytes.length;
      if (this.keptBytes > this.task.maxOutputSize) this.overflow = true;
      else this.kept.push(bytes);
    }
    this.out.write(this.decoder.write(bytes));
  }

  stderr(text: string): void {
    this.err.write(text);
  }

  /** Ends the step: flushes the logs and builds its result. A stop, if one came, decides it. */
  async finish(failure?: { exitCode: number; error: string }): Promise<StepResult> {
    this.task.port.off('message', this.listener);
    if (this.stopMessage) {
      await this.closeLogs();
      const signal = this.stopMessage.signal;
      return { kind: 'ok', exitCode: 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0), signal, error: `signal: ${signal}` };
    }
    let error: string | undefined;
    if (failure) {
      error = this.mask(failure.error);
      // The message is the step's error and the last line of its stderr log.
      this.err.write(`${failure.error}\n`);
    }
    await this.closeLogs();
    const result: StepResult = { kind: 'ok', exitCode: failure?.exitCode ?? 0 };
    if (error !== undefined) result.error = error;
    if (this.overflow) result.error = `output exceeded maxOutputSize (${this.task.maxOutputSize} bytes)`;
    else if (this.task.captureOutput) result.output = this.mask(Buffer.concat(this.kept).toString('utf8')).trim();
    // Output that was lost fails the step, whatever else it did.
    const lost = this.out.failure ?? this.err.failure;
    if (lost) result.error = result.error ? `${result.error}; ${lost}` : lost;
    return result;
  }

  private async closeLogs(): Promise<void> {
    this.out.write(this.decoder.end());
    await Promise.all([this.out.close(true), this.err.close()]);
  }
}

// A container step's two output streams (demultiplexed from the daemon's stream) to its log files:
// masked line by line, stdout kept for `output` up to maxOutputSize, as the shell executor does.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { LineMasker, createMasker } from '../../core/index.ts';
import type { StepTask } from '../../core/index.ts';
import type { ChunkSink } from './docker.ts';
import { workerLog } from '../../logging/worker-log.ts';

class LogSink implements ChunkSink {
  private failed = false;
  private prepared = false;
  private readonly masker: LineMasker | undefined;

  constructor(private readonly paths: string[], mask: ((text: string) => string) | undefined, private readonly onChunk?: (chunk: Buffer) => void) {
    this.masker = mask ? new LineMasker(mask) : undefined;
  }

  write(chunk: Buffer | string): boolean {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.onChunk?.(buffer);
    this.append(this.masker ? this.masker.push(buffer.toString('utf8')) : buffer);
    return true;
  }

  /** Bytes appended to the step's log (the stderr tail of a failure is read back from them). */
  written = 0;

  /** `create`: the step's log exists afterwards though nothing came (a stdout log, as Dagu's). */
  flush(create = false): void {
    if (this.masker) this.append(this.masker.end());
    if (create && !this.prepared && this.paths.length > 0) this.append('', true);
  }

  append(data: Buffer | string, create = false): void {
    if ((data.length === 0 && !create) || this.failed) return;
    this.written += Buffer.byteLength(data);
    for (const path of this.paths) {
      try {
        // A definition's output file may name a folder that does not exist yet.
        if (!this.prepared) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        appendFileSync(path, data, { mode: 0o600 });
      } catch (error) {
        // The step goes on; its output is lost, and the server's log says why.
        this.failed = true;
        workerLog('error', { path: path, error: (error as Error).message }, 'cannot write a step log');
      }
    }
    this.prepared = true;
  }
}

export class StepOutput {
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  private readonly mask: ((text: string) => string) | undefined;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  overflow = false;

  constructor(private readonly task: StepTask) {
    this.mask = task.secrets.length > 0 ? createMasker(task.secrets) : undefined;
    const keep = (chunk: Buffer) => {
      if (this.overflow) return;
      this.keptBytes += chunk.length;
      if (this.keptBytes > task.maxOutputSize) this.overflow = true;
      else this.kept.push(chunk);
    };
    const paths = (...list: Array<string | undefined>) => list.filter((path): path is string => path !== undefined);
    this.stdout = new LogSink(paths(task.stdoutPath, task.stdoutCopy), this.mask, task.captureOutput ? keep : undefined);
    this.stderr = new LogSink(paths(task.stderrPath, task.stderrCopy), this.mask);
  }

  /** The step's own stderr log. */
  get stderrPath(): string | undefined {
    return this.task.stderrPath;
  }

  get maxOutputSize(): number {
    return this.task.maxOutputSize;
  }

  /** A message of ours (a daemon's error), masked, as a line of the step's stderr log. */
  error(message: string): string {
    const masked = this.masked(message);
    this.stderr.append(`${masked}\n`);
    return masked;
  }

  masked(text: string): string {
    return this.mask ? this.mask(text) : text;
  }

  /** Writes what is pending; the captured stdout (masked and trimmed) when the step captures it. */
  finish(): { output?: string; overflow: boolean } {
    this.stdout.flush(true);
    this.stderr.flush();
    if (this.overflow || !this.task.captureOutput) return { overflow: this.overflow };
    return { output: this.masked(Buffer.concat(this.kept).toString('utf8')).trim(), overflow: false };
  }
}

// LogStore: the layout of the log directory, the run log writer and the chunk reader.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileSafe, type LogChunk, type LogQuery, type LogStore, type StepLogPaths } from '../core/index.ts';
import { readLogChunk } from './log-reader.ts';

export class LogFiles implements LogStore {
  private readonly writers = new Map<string, WriteStream>();

  constructor(readonly dir: string) {}

  runDir(name: string, dagRunId: string, attemptId: string): string {
    // Names and ids are validated before they get here; fileSafe is a second fence.
    return join(this.dir, fileSafe(name), fileSafe(dagRunId), fileSafe(attemptId));
  }

  runLogPath(name: string, dagRunId: string, attemptId: string): string {
    return join(this.runDir(name, dagRunId, attemptId), 'run.log');
  }

  stepPaths(name: string, dagRunId: string, attemptId: string, index: number, stepName: string): StepLogPaths {
    const base = join(this.runDir(name, dagRunId, attemptId), `${String(index + 1).padStart(3, '0')}.${fileSafe(stepName)}`);
    return { stdout: `${base}.out`, stderr: `${base}.err`, script: `${base}.script` };
  }

  async prepare(name: string, dagRunId: string, attemptId: string): Promise<void> {
    await mkdir(this.runDir(name, dagRunId, attemptId), { recursive: true });
  }

  appendRunLog(path: string, line: string): void {
    let writer = this.writers.get(path);
    if (!writer) {
      writer = createWriteStream(path, { flags: 'a' });
      writer.on('error', () => undefined);
      this.writers.set(path, writer);
    }
    writer.write(`${line}\n`);
  }

  async closeRunLog(path: string): Promise<void> {
    const writer = this.writers.get(path);
    if (!writer) return;
    this.writers.delete(path);
    await new Promise<void>((resolve) => writer.end(resolve));
  }

  read(path: string, query: LogQuery): Promise<LogChunk | undefined> {
    return readLogChunk(path, query);
  }
}

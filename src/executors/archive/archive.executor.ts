// The archive executor (definition format: archive executor): `extract`, `create` or `list` on a tar, tar.gz or
// zip archive. Relative paths resolve against the step's working folder. Each operation prints
// its result as Dagu does: one JSON document (2-space indent) on stdout, which `output` captures.
import { stat } from 'node:fs/promises';
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { goHtmlEscape } from '../go-json.ts';
import { StepOutput } from '../step-output.ts';
import { readEntries, type ArchiveEntry } from './archive-entries.ts';
import { ArchiveError } from './archive-error.ts';
import { FORMAT_SUFFIXES, formatFromName, formatOfSource } from './archive-format.ts';
import { readArchiveStep, type ArchiveStep } from './archive-options.ts';
import { createArchive } from './create-archive.ts';
import { goDuration, goFileMode, goTime } from './entry-paths.ts';
import { extractEntries } from './extract-entries.ts';

export async function runArchive(task: WorkerTask): Promise<StepResult> {
  const output = new StepOutput(task);
  const started = performance.now();
  try {
    const step = readArchiveStep(task.command, task.executor.config, task.workingDir);
    const result = await perform(step, output);
    if (!output.stopped) output.stdout(goJson({ ...withoutErrors(result), ...tail(step, result, performance.now() - started) }));
    return await output.finish();
  } catch (error) {
    if (output.stopped) return output.finish();
    const exitCode = error instanceof ArchiveError ? error.exitCode : 1;
    return output.finish({ exitCode, error: (error as Error)?.message ?? String(error) });
  }
}

/** The last fields of Dagu's result, in its order; `errors` only when continueOnError kept some. */
function tail(step: ArchiveStep, result: OperationResult, elapsedMs: number): Record<string, unknown> {
  const duration = goDuration(elapsedMs);
  if (result.operation === 'list') return { verified: step.verifyIntegrity, duration };
  const errors = Array.isArray(result.errors) && result.errors.length > 0 ? { errors: result.errors } : {};
  // A dry create writes no archive to read back; a dry extract has read its source through.
  return { duration, ...errors, verifyPerformed: step.verifyIntegrity && !(step.dryRun && result.operation === 'create') };
}

type OperationResult = Record<string, unknown> & { operation: string };

async function perform(step: ArchiveStep, output: StepOutput): Promise<OperationResult> {
  const signal = output.signal;
  const warn = (message: string) => output.stderr(`archive executor warning: ${message}\n`);
  if (step.operation === 'create') {
    const format = step.format ?? formatFromName(step.destination);
    if (!format) throw new ArchiveError('formatDetection', step.destination === '' ? 'could not infer format; specify config.format' : `cannot tell the format of ${step.destination} from its name: use ${FORMAT_SUFFIXES}, or set format`);
    const counts = await createArchive(step.sourcePath, step.destinationPath, format, step, signal);
    if (step.verifyIntegrity && !step.dryRun) await verify(readEntries(step.destinationPath, format, signal));
    return { operation: 'create', source: step.source, destination: step.destination, ...counts };
  }
  const format = step.format ?? await formatOfSource(step.sourcePath);
  if (step.operation === 'list') {
    const files = [];
    let totalSize = 0;
    for await (const entry of readEntries(step.sourcePath, format, signal)) {
      if (step.verifyIntegrity) await drain(entry);
      const path = displayPath(entry.name);
      if (path === '' || !step.select(path, entry.type === 'directory')) continue;
      files.push({ path, size: entry.size, mode: goFileMode(entry.type, entry.mode), modTime: goTime(entry.mtime), isDir: entry.type === 'directory' });
      if (entry.type !== 'directory') totalSize += entry.size;
    }
    return { operation: 'list', source: step.source, totalFiles: files.length, totalSize, files };
  }
  if (step.verifyIntegrity) {
    // Every entry is read (and checked) before anything is written: a damaged archive extracts nothing.
    if (!(await stat(step.sourcePath)).isFile()) throw new ArchiveError('config', 'verifyIntegrity reads the archive twice: its source must be a regular file');
    await verify(readEntries(step.sourcePath, format, signal));
  }
  const shownDestination = step.destination === '' ? '.' : step.destination;
  const counts = await extractEntries(readEntries(step.sourcePath, format, signal), step.destinationPath, { ...step, shownDestination, warn });
  return { operation: 'extract', source: step.source, destination: shownDestination, ...counts };
}

/** The result's fields before `duration`: its errors go after it, as Dagu orders them. */
function withoutErrors(result: OperationResult): OperationResult {
  const { errors: _errors, ...rest } = result;
  return rest as OperationResult;
}

/** Reads every entry's data: tar's header checksums and gzip's CRC, zip's sizes and CRC-32 are checked on the way. */
async function verify(entries: AsyncIterable<ArchiveEntry>): Promise<void> {
  for await (const entry of entries) await drain(entry);
}

async function drain(entry: ArchiveEntry): Promise<void> {
  if (entry.type !== 'file' && entry.type !== 'hardlink') return;
  for await (const chunk of entry.data()) void chunk;
}

/** An entry's path as Dagu lists it: no leading "./", no trailing slash. */
function displayPath(name: string): string {
  return name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

/** Go's json.Encoder with a 2-space indent: <, > and & escaped, and a newline at the end. */
function goJson(value: unknown): string {
  return `${goHtmlEscape(JSON.stringify(value, null, 2))}\n`;
}

// The archive executor (definition format: archive executor): `extract`, `create` or `list` on a tar, tar.gz or
// zip archive. Relative paths resolve against the step's working folder. Each operation prints
// its result as Dagu does: one JSON document (2-space indent) on stdout, which `output` captures.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import picomatch from 'picomatch';
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { StepOutput } from '../step-output.ts';
import { readEntries, type ArchiveEntry } from './archive-entries.ts';
import { ArchiveError } from './archive-error.ts';
import { FORMAT_SUFFIXES, formatFromName, formatOfSource } from './archive-format.ts';
import { createArchive } from './create-archive.ts';
import { goDuration, goFileMode, goTime } from './entry-paths.ts';
import { extractEntries } from './extract-entries.ts';

interface ArchiveStep {
  operation: 'extract' | 'create' | 'list';
  /** As written: printed in the result. */
  source: string;
  destination: string;
  sourcePath: string;
  destinationPath: string;
  include: (path: string, isDirectory: boolean) => boolean;
  verifyIntegrity: boolean;
}

export async function runArchive(task: WorkerTask): Promise<StepResult> {
  const output = new StepOutput(task);
  const started = performance.now();
  try {
    const step = readStep(task);
    const result = await perform(step, output);
    if (!output.stopped) output.stdout(goJson({ ...result, ...tail(step, result.operation, performance.now() - started) }));
    return await output.finish();
  } catch (error) {
    if (output.stopped) return output.finish();
    const exitCode = error instanceof ArchiveError ? error.exitCode : 1;
    return output.finish({ exitCode, error: (error as Error)?.message ?? String(error) });
  }
}

/** The last fields of Dagu's result, in its order. */
function tail(step: ArchiveStep, operation: string, elapsedMs: number): Record<string, unknown> {
  const duration = goDuration(elapsedMs);
  return operation === 'list' ? { verified: step.verifyIntegrity, duration } : { duration, verifyPerformed: step.verifyIntegrity };
}

function readStep(task: WorkerTask): ArchiveStep {
  const config = task.executor.config;
  const operation = (task.command ?? '').trim().toLowerCase();
  if (operation !== 'extract' && operation !== 'create' && operation !== 'list') {
    throw new ArchiveError('config', `unsupported archive operation "${task.command ?? ''}": use extract, create or list`);
  }
  const source = typeof config.source === 'string' ? config.source : '';
  if (source === '') throw new ArchiveError('config', `source is required for ${operation}`);
  const destination = typeof config.destination === 'string' ? config.destination : '';
  if (operation === 'create' && destination === '') throw new ArchiveError('config', 'destination is required for create');
  const patterns = (Array.isArray(config.include) ? config.include : typeof config.include === 'string' ? [config.include] : [])
    .map((pattern) => String(pattern).trim()).filter((pattern) => pattern !== '');
  // dot: a pattern's `*` matches dotfiles too, as Dagu's doublestar does.
  const matches = patterns.length > 0 ? picomatch(patterns, { dot: true }) : undefined;
  return {
    operation,
    source,
    destination,
    sourcePath: resolve(task.workingDir, source),
    destinationPath: resolve(task.workingDir, destination === '' ? '.' : destination),
    include: (path) => matches === undefined || matches(path),
    verifyIntegrity: config.verifyIntegrity === true,
  };
}

type OperationResult = Record<string, unknown> & { operation: string };

async function perform(step: ArchiveStep, output: StepOutput): Promise<OperationResult> {
  const signal = output.signal;
  const warn = (message: string) => output.stderr(`archive step warning: ${message}\n`);
  if (step.operation === 'create') {
    const format = formatFromName(step.destination);
    if (!format) throw new ArchiveError('formatDetection', `cannot tell the format of ${step.destination} from its name: use ${FORMAT_SUFFIXES}`);
    const counts = await createArchive(step.sourcePath, step.destinationPath, format, step.include, signal);
    if (step.verifyIntegrity) await verify(readEntries(step.destinationPath, format, signal));
    return { operation: 'create', source: step.source, destination: step.destination, ...counts };
  }
  const format = await formatOfSource(step.sourcePath);
  if (step.operation === 'list') {
    const files = [];
    let totalSize = 0;
    for await (const entry of readEntries(step.sourcePath, format, signal)) {
      if (step.verifyIntegrity) await drain(entry);
      const path = displayPath(entry.name);
      if (path === '' || !step.include(path, entry.type === 'directory')) continue;
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
  const counts = await extractEntries(readEntries(step.sourcePath, format, signal), step.destinationPath, { include: step.include, warn });
  return { operation: 'extract', source: step.source, destination: step.destination === '' ? '.' : step.destination, ...counts };
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
  const text = JSON.stringify(value, null, 2).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${text}\n`;
}

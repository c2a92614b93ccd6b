// Writes an archive's entries under a destination, refusing any that would land outside it: an
// absolute name or `..` (zip-slip, tar-slip), a symlink pointing out, a path through a symlink
// (from the archive or already there) that leads out. Names are checked before anything of the
// entry is written, and every folder on the way is resolved on disk, so that nothing outside the
// destination is created, written or replaced.
import { constants as fsConstants } from 'node:fs';
import { link, lstat, mkdir, open, realpath, symlink, unlink, utimes } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import type { ArchiveEntry } from './archive-entries.ts';
import { ArchiveError } from './archive-error.ts';
import { entryPath, symlinkTarget } from './entry-paths.ts';

export interface ExtractCounts {
  filesExtracted: number;
  bytesExtracted: number;
  filesSkipped: number;
  /** What continueOnError let by, one message per entry. */
  errors: string[];
}

export interface ExtractOptions {
  /** Whether the entry's path (relative, with slashes, after stripComponents) is to be extracted. */
  select(path: string, isDirectory: boolean): boolean;
  warn(message: string): void;
  /** Leading folders dropped from each entry's path. */
  stripComponents: number;
  /** false: each entry goes straight into the destination under its base name. */
  preservePaths: boolean;
  /** Replace what is at an entry's place; without it, an entry whose place is taken fails. */
  overwrite: boolean;
  /** Count what would be extracted, writing nothing (not even the destination folder). */
  dryRun: boolean;
  /** An entry that fails is recorded in `errors`, and the next one is extracted. */
  continueOnError: boolean;
  /** The destination as written, for messages. */
  shownDestination: string;
}

/** Where an entry goes, relative to the destination, after stripComponents and preservePaths ('' when nothing is left). */
export function placedPath(path: string, options: Pick<ExtractOptions, 'stripComponents' | 'preservePaths'>): string {
  if (path === '') return '';
  const parts = path.split('/');
  if (options.stripComponents >= parts.length) return '';
  const kept = parts.slice(options.stripComponents);
  return options.preservePaths ? kept.join('/') : kept[kept.length - 1] ?? '';
}

export async function extractEntries(entries: AsyncIterable<ArchiveEntry>, destination: string, options: ExtractOptions): Promise<ExtractCounts> {
  const counts: ExtractCounts = { filesExtracted: 0, bytesExtracted: 0, filesSkipped: 0, errors: [] };
  let root = destination;
  if (!options.dryRun) {
    try {
      await mkdir(destination, { recursive: true });
    } catch (error) {
      throw ArchiveError.from('destination', error);
    }
    root = await realpath(destination);
  }
  for await (const entry of entries) {
    try {
      await extractOne(root, entry, options, counts);
    } catch (error) {
      // A damaged archive cannot be read on from the failed entry; a stop is no entry's failure.
      if (!options.continueOnError || !(error instanceof ArchiveError) || error.kind === 'corrupted') throw error;
      counts.errors.push(error.message);
      options.warn(`continuing after error: ${error.message}`);
    }
  }
  return counts;
}

async function extractOne(root: string, entry: ArchiveEntry, options: ExtractOptions, counts: ExtractCounts): Promise<void> {
  const checked = entryPath(entry.name);
  if (checked.kind === 'refused') throw new ArchiveError('extract', `${checked.reason}: refused, nothing of it was written`);
  if (checked.path === '') return;
  const path = placedPath(checked.path, options);
  if (path === '') {
    // Folders left with no name (stripped away) are dropped quietly, as Dagu drops them.
    if (entry.type === 'directory') return;
    options.warn('skipping unnamed file in archive');
    counts.filesSkipped++;
    return;
  }
  if (!options.select(path, entry.type === 'directory')) {
    counts.filesSkipped++;
    return;
  }
  if (entry.type === 'other') {
    options.warn(`skipping entry "${entry.name}": devices, FIFOs and other special files are not extracted`);
    counts.filesSkipped++;
    return;
  }
  if (options.dryRun) {
    if (entry.type !== 'directory') {
      counts.filesExtracted++;
      counts.bytesExtracted += entry.type === 'file' ? entry.size : 0;
    }
    return;
  }
  switch (entry.type) {
    case 'directory':
      await ensureDirectory(root, path, entry.name);
      break;
    case 'file':
      counts.bytesExtracted += await writeFile(root, path, entry, options);
      counts.filesExtracted++;
      break;
    case 'symlink':
      await writeSymlink(root, path, entry, options);
      counts.filesExtracted++;
      break;
    case 'hardlink':
      await writeHardlink(root, path, entry, options);
      counts.filesExtracted++;
      break;
  }
}

function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep));
}

/**
 * The real folder of `path`'s parent, made as needed: each existing component is resolved, and a
 * symlink there is followed only when it leads to a place inside the destination.
 */
async function parentOf(root: string, path: string, name: string): Promise<string> {
  const parts = path.split('/');
  parts.pop();
  let current = root;
  for (const part of parts) current = await step(root, current, part, name);
  return current;
}

async function step(root: string, current: string, part: string, name: string): Promise<string> {
  const next = join(current, part);
  let stats;
  try {
    stats = await lstat(next);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw ArchiveError.from('extract', error);
    await mkdir(next).catch((failure: NodeJS.ErrnoException) => { if (failure.code !== 'EEXIST') throw ArchiveError.from('destination', failure); });
    return step(root, current, part, name);
  }
  if (stats.isSymbolicLink()) {
    const real = await realpath(next).catch(() => undefined);
    if (real === undefined || !isWithin(root, real)) throw new ArchiveError('extract', `entry "${name}" goes through the symlink ${relative(root, next)}, which leads outside the destination: refused, nothing of it was written`);
    return real;
  }
  if (!stats.isDirectory()) throw new ArchiveError('extract', `entry "${name}": ${relative(root, next)} exists and is not a folder`);
  return next;
}

async function ensureDirectory(root: string, path: string, name: string): Promise<void> {
  const parent = await parentOf(root, path, name);
  await step(root, parent, path.split('/').pop() ?? '', name);
}

/**
 * The place of a new file, link or symlink. Something already there (a dangling symlink too) fails
 * the entry unless `overwrite`; with it, whatever non-folder is there is removed, never followed.
 */
async function placeFor(root: string, path: string, name: string, options: ExtractOptions): Promise<string> {
  const target = join(await parentOf(root, path, name), path.split('/').pop() ?? '');
  try {
    const stats = await lstat(target);
    if (!options.overwrite) throw new ArchiveError('destination', `destination "${posix.join(options.shownDestination, path)}" exists (overwrite disabled)`);
    if (stats.isDirectory()) throw new ArchiveError('extract', `entry "${name}": ${path} exists and is a folder`);
    await unlink(target);
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw ArchiveError.from('destination', error);
  }
  return target;
}

async function writeFile(root: string, path: string, entry: ArchiveEntry, options: ExtractOptions): Promise<number> {
  const target = await placeFor(root, path, entry.name, options);
  // O_EXCL and O_NOFOLLOW: a symlink put there meanwhile is not written through.
  const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW;
  let file;
  try {
    file = await open(target, flags, entry.mode & 0o777);
  } catch (error) {
    throw ArchiveError.from('destination', error);
  }
  let written = 0;
  try {
    for await (const chunk of entry.data()) {
      await file.write(chunk);
      written += chunk.length;
    }
    // A truncated tar ends its last entry's data early, and tells so only afterwards.
    if (written !== entry.size) throw new ArchiveError('corrupted', `entry "${entry.name}": ${written} of its ${entry.size} bytes in the archive`);
  } catch (error) {
    // A damaged entry (its CRC or size found wrong at its end) is not left behind half written.
    await file.close();
    await unlink(target).catch(() => {});
    throw error;
  }
  await file.close();
  await utimes(target, entry.mtime, entry.mtime).catch(() => {});
  return written;
}

async function writeSymlink(root: string, path: string, entry: ArchiveEntry, options: ExtractOptions): Promise<void> {
  const target = entry.linkTarget ?? '';
  const lexical = symlinkTarget(entry.name, path, target);
  if (lexical.kind === 'refused') throw new ArchiveError('extract', `${lexical.reason}: refused, nothing of it was written`);
  const place = await placeFor(root, path, entry.name, options);
  // Checked again from the folder the link really is in (a symlinked folder on the way moves it).
  if (!isWithin(root, join(place, '..', target))) {
    throw new ArchiveError('extract', `symlink "${entry.name}" points outside the destination ("${target}"): refused, nothing of it was written`);
  }
  await symlink(target, place).catch((error: unknown) => { throw ArchiveError.from('destination', error); });
  // A `..` after a symlinked folder in the target leaves the folder the names suggest: where the
  // new link resolves is what counts. A dangling link is kept (nothing can be written through it).
  const real = await realpath(place).catch(() => undefined);
  if (real !== undefined && !isWithin(root, real)) {
    await unlink(place);
    throw new ArchiveError('extract', `symlink "${entry.name}" points outside the destination ("${target}" leads to ${real}): refused`);
  }
}

async function writeHardlink(root: string, path: string, entry: ArchiveEntry, options: ExtractOptions): Promise<void> {
  const named = entryPath(entry.linkTarget ?? '');
  // The link's target is an entry of the archive: it was placed as every entry is.
  const checked = named.kind === 'ok' ? { kind: 'ok' as const, path: placedPath(named.path, options) } : named;
  if (checked.kind === 'refused' || checked.path === '') {
    throw new ArchiveError('extract', `hard link "${entry.name}" points outside the destination ("${entry.linkTarget ?? ''}"): refused, nothing of it was written`);
  }
  const source = join(await parentOf(root, checked.path, entry.name), checked.path.split('/').pop() ?? '');
  const real = await realpath(source).catch(() => undefined);
  if (real === undefined || !isWithin(root, real)) {
    throw new ArchiveError('extract', `hard link "${entry.name}" points to "${entry.linkTarget ?? ''}", which is not a file extracted into the destination`);
  }
  const place = await placeFor(root, path, entry.name, options);
  await link(real, place).catch((error: unknown) => { throw ArchiveError.from('destination', error); });
}

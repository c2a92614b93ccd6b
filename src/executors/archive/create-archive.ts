// Writes an archive of a file or a folder: tar and tar.gz with node-tar, zip with yazl. A folder's
// entries are named under its own name ("data/a.txt"), as Dagu names them. The archive is written
// beside its destination and renamed into place once whole: a failed or stopped create leaves none.
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create as createTar } from 'tar';
import yazl from 'yazl';
import { ArchiveError } from './archive-error.ts';
import type { ArchiveFormat } from './archive-format.ts';

interface Item {
  /** Its name in the archive, with slashes. */
  name: string;
  diskPath: string;
  type: 'file' | 'directory' | 'symlink';
  size: number;
  mode: number;
  mtime: Date;
}

export interface CreateOptions {
  select(path: string, isDirectory: boolean): boolean;
  /** Store what a symlink points to (a file's data, a folder's entries) instead of the link. */
  followSymlinks: boolean;
  /** Count what would be archived, writing nothing. */
  dryRun: boolean;
  /** zlib's level for tar.gz; undefined: zlib's default. */
  compressionLevel?: number;
}

export interface CreateCounts {
  filesAdded: number;
  bytesArchived: number;
}

export async function createArchive(source: string, destination: string, format: ArchiveFormat, options: CreateOptions, signal: AbortSignal): Promise<CreateCounts> {
  try {
    await stat(source);
  } catch (error) {
    throw ArchiveError.from('sourceNotFound', error);
  }
  // The archive being written is no part of what it holds (a destination inside the source folder).
  const walk = { skip: resolve(destination), follow: options.followSymlinks, folders: new Set<string>() };
  let items: Item[];
  try {
    items = (await collect(source, basename(source), walk)).filter((item) => options.select(item.name, item.type === 'directory'));
  } catch (error) {
    throw ArchiveError.from('create', error);
  }
  if (options.dryRun) return countsOf(items);
  try {
    await mkdir(dirname(destination), { recursive: true });
  } catch (error) {
    throw ArchiveError.from('destination', error);
  }
  const partial = join(dirname(destination), `.${basename(destination)}.${process.pid}.${Date.now()}.partial`);
  try {
    const stream = format === 'zip' ? zipStream(items) : tarStream(items, dirname(source), format === 'tar.gz', options);
    await pipeline(stream, createWriteStream(partial, { flags: 'wx' }), { signal });
    await rename(partial, destination);
  } catch (error) {
    await rm(partial, { force: true });
    if (signal.aborted) throw error;
    throw ArchiveError.from('create', error);
  }
  return countsOf(items);
}

function countsOf(items: Item[]): CreateCounts {
  const files = items.filter((item) => item.type !== 'directory');
  return { filesAdded: files.length, bytesArchived: files.reduce((sum, item) => sum + item.size, 0) };
}

interface Walk {
  skip: string;
  follow: boolean;
  /** The real folders on the way down, when symlinks are followed: one met again is a loop. */
  folders: Set<string>;
}

/** The source and, for a folder, everything in it, in name order; symlinks are kept as symlinks unless followed. */
async function collect(diskPath: string, name: string, walk: Walk): Promise<Item[]> {
  const info = walk.follow ? await stat(diskPath) : await lstat(diskPath);
  const base = { name, diskPath, size: info.isFile() ? info.size : 0, mode: info.mode & 0o7777, mtime: info.mtime };
  if (info.isSymbolicLink()) return [{ ...base, type: 'symlink' }];
  if (info.isFile()) return resolve(diskPath) === walk.skip ? [] : [{ ...base, type: 'file' }];
  if (!info.isDirectory()) return [];
  const real = walk.follow ? await realpath(diskPath) : diskPath;
  if (walk.follow && walk.folders.has(real)) throw new Error(`${diskPath}: a symlink loop (it leads back to ${real})`);
  walk.folders.add(real);
  const items: Item[] = [{ ...base, type: 'directory' }];
  for (const child of (await readdir(diskPath)).sort()) items.push(...await collect(join(diskPath, child), `${name}/${child}`, walk));
  walk.folders.delete(real);
  return items;
}

function tarStream(items: Item[], cwd: string, gzip: boolean, options: CreateOptions): Readable {
  // noDirRecurse: the list is complete (filtered by include); a folder brings nothing of its own.
  const compression = gzip && options.compressionLevel !== undefined ? { level: options.compressionLevel } : gzip;
  return createTar({ cwd, gzip: compression, noDirRecurse: true, follow: options.followSymlinks }, items.map((item) => item.name)) as unknown as Readable;
}

function zipStream(items: Item[]): Readable {
  const zip = new yazl.ZipFile();
  void (async () => {
    for (const item of items) {
      const options = { mtime: item.mtime, mode: item.mode };
      if (item.type === 'directory') zip.addEmptyDirectory(item.name, options);
      else if (item.type === 'file') zip.addFile(item.diskPath, item.name, options);
      else zip.addBuffer(Buffer.from(await readlink(item.diskPath)), item.name, { mtime: item.mtime, mode: 0o120777 });
    }
    zip.end();
  })().catch((error: Error) => zip.outputStream.emit('error', error));
  return zip.outputStream as Readable;
}

// Writes an archive of a file or a folder: tar and tar.gz with node-tar, zip with yazl. A folder's
// entries are named under its own name ("data/a.txt"), as Dagu names them. The archive is written
// beside its destination and renamed into place once whole: a failed or stopped create leaves none.
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, readlink, rename, rm, stat } from 'node:fs/promises';
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

export interface CreateCounts {
  filesAdded: number;
  bytesArchived: number;
}

export async function createArchive(source: string, destination: string, format: ArchiveFormat, include: (path: string, isDirectory: boolean) => boolean, signal: AbortSignal): Promise<CreateCounts> {
  try {
    await stat(source);
  } catch (error) {
    throw ArchiveError.from('sourceNotFound', error);
  }
  // The archive being written is no part of what it holds (a destination inside the source folder).
  const items = (await collect(source, basename(source), resolve(destination))).filter((item) => include(item.name, item.type === 'directory'));
  try {
    await mkdir(dirname(destination), { recursive: true });
  } catch (error) {
    throw ArchiveError.from('destination', error);
  }
  const partial = join(dirname(destination), `.${basename(destination)}.${process.pid}.${Date.now()}.partial`);
  try {
    const stream = format === 'zip' ? zipStream(items) : tarStream(items, dirname(source), format === 'tar.gz');
    await pipeline(stream, createWriteStream(partial, { flags: 'wx' }), { signal });
    await rename(partial, destination);
  } catch (error) {
    await rm(partial, { force: true });
    if (signal.aborted) throw error;
    throw ArchiveError.from('create', error);
  }
  const files = items.filter((item) => item.type !== 'directory');
  return { filesAdded: files.length, bytesArchived: files.reduce((sum, item) => sum + item.size, 0) };
}

/** The source and, for a folder, everything in it, in name order; symlinks are kept as symlinks. */
async function collect(diskPath: string, name: string, skip: string): Promise<Item[]> {
  const info = await lstat(diskPath);
  const base = { name, diskPath, size: info.isFile() ? info.size : 0, mode: info.mode & 0o7777, mtime: info.mtime };
  if (info.isSymbolicLink()) return [{ ...base, type: 'symlink' }];
  if (info.isFile()) return resolve(diskPath) === skip ? [] : [{ ...base, type: 'file' }];
  if (!info.isDirectory()) return [];
  const items: Item[] = [{ ...base, type: 'directory' }];
  for (const child of (await readdir(diskPath)).sort()) items.push(...await collect(join(diskPath, child), `${name}/${child}`, skip));
  return items;
}

function tarStream(items: Item[], cwd: string, gzip: boolean): Readable {
  // noDirRecurse: the list is complete (filtered by include); a folder brings nothing of its own.
  return createTar({ cwd, gzip, noDirRecurse: true }, items.map((item) => item.name)) as unknown as Readable;
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

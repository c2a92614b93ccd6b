// Reading an archive's entries, in order, with node-tar (tar, tar.gz) and yauzl (zip). Neither
// path nor link is checked here: listing shows an archive as it is; extract-entries.ts decides
// what may be written.
import { open as openFd, close as closeFd, constants as fsConstants, createReadStream, fstat, type Stats } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import { ArchiveError } from './archive-error.ts';
import type { ArchiveFormat } from './archive-format.ts';

export type EntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

export interface ArchiveEntry {
  /** As stored (zip names decoded from CP437 or UTF-8, backslashes made slashes). */
  name: string;
  type: EntryType;
  /** A symlink's target, or a hardlink's path in the archive. */
  linkTarget?: string;
  size: number;
  /** Permission bits (no file type). */
  mode: number;
  mtime: Date;
  /** The entry's data, checked as it is read (zip: its size and CRC-32); read it before the next entry, or not at all. */
  data(): AsyncIterable<Buffer>;
}

/** The entries of the archive at `path`. Ending the iteration early (or `signal`) closes the file. */
export function readEntries(path: string, format: ArchiveFormat, signal: AbortSignal): AsyncGenerator<ArchiveEntry> {
  return format === 'zip' ? readZip(path, signal) : readTar(path, signal);
}

const openAsync = promisify(openFd);
const fstatAsync = promisify(fstat);

/**
 * A tar stream from a regular file or a pipe. The file is opened without blocking: a FIFO with no
 * writer would hold a thread of libuv's pool in open(2), out of a stop's reach. A FIFO is read as
 * a socket, whose reads wait in the event loop and end when the step is stopped.
 */
async function openStream(path: string): Promise<Readable> {
  let fd: number;
  try {
    fd = await openAsync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (error) {
    throw ArchiveError.from('sourceNotFound', error);
  }
  let stats: Stats;
  try {
    stats = await fstatAsync(fd);
  } catch (error) {
    closeFd(fd, () => {});
    throw ArchiveError.from('sourceNotFound', error);
  }
  if (stats.isFIFO()) return new Socket({ fd, readable: true, writable: false });
  if (!stats.isFile()) {
    closeFd(fd, () => {});
    throw new ArchiveError('config', `source ${path} must be a file`);
  }
  return createReadStream('', { fd });
}

async function* readTar(path: string, signal: AbortSignal): AsyncGenerator<ArchiveEntry> {
  const input = await openStream(path);
  // strict: a bad header checksum, a truncated archive or a gzip error is an error, not a warning.
  const parser = new Parser({ strict: true });
  const queue: ReadEntry[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => wake?.();
  // node-tar emits the next entry only when this one's data has been read: entries come in order.
  parser.on('entry', (entry: ReadEntry) => { queue.push(entry); notify(); });
  parser.on('end', () => { ended = true; notify(); });
  const fail = (error: Error) => { failure ??= error; notify(); };
  parser.on('error', fail);
  input.on('error', fail);
  const onAbort = () => fail(signal.reason as Error);
  // A stop that came while the source was being opened counts too.
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort);
  input.pipe(parser);
  let current: ReadEntry | undefined;
  try {
    for (;;) {
      if (failure) throw ArchiveError.from('corrupted', failure);
      current = queue.shift();
      if (current) {
        yield tarEntry(current);
        // What the reader left unread is skipped, so that the next entry comes.
        current.resume();
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => { wake = resolve; });
      wake = undefined;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    input.unpipe(parser);
    input.destroy();
  }
}

const TAR_TYPES: Record<string, EntryType> = {
  File: 'file', OldFile: 'file', ContiguousFile: 'file', Directory: 'directory', SymbolicLink: 'symlink', Link: 'hardlink',
};

function tarEntry(entry: ReadEntry): ArchiveEntry {
  const type = TAR_TYPES[entry.type] ?? 'other';
  return {
    name: entry.path,
    type,
    ...(entry.linkpath !== undefined && (type === 'symlink' || type === 'hardlink') ? { linkTarget: entry.linkpath } : {}),
    size: entry.size ?? 0,
    mode: (entry.mode ?? (type === 'directory' ? 0o755 : 0o644)) & 0o7777,
    mtime: entry.mtime ?? new Date(0),
    data: () => entry as unknown as AsyncIterable<Buffer>,
  };
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
/** "Version made by" of an archive written on Unix: its external attributes hold a mode. */
const UNIX_HOST = 3;

async function* readZip(path: string, signal: AbortSignal): AsyncGenerator<ArchiveEntry> {
  let zip: yauzl.ZipFile;
  try {
    const fd = await openAsync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const stats = await fstatAsync(fd).catch((error: Error) => { closeFd(fd, () => {}); throw error; });
    if (!stats.isFile()) {
      closeFd(fd, () => {});
      throw new ArchiveError('config', `source ${path} must be a regular file (a zip archive is read from its end)`);
    }
    // File names are decoded and checked by the caller, so that a hostile name can be listed.
    zip = await yauzl.fromFdPromise(fd, { lazyEntries: true, autoClose: true, decodeStrings: false, validateEntrySizes: true });
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    throw ArchiveError.from((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'sourceNotFound' : 'corrupted', error);
  }
  let failure: Error | undefined;
  let next: ((entry: yauzl.Entry | undefined) => void) | undefined;
  zip.on('entry', (entry: yauzl.Entry) => next?.(entry));
  zip.on('end', () => next?.(undefined));
  zip.on('error', (error: Error) => { failure ??= error; next?.(undefined); });
  const onAbort = () => { failure ??= signal.reason as Error; next?.(undefined); };
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      if (failure) throw signal.aborted ? failure : ArchiveError.from('corrupted', failure);
      const entry = await new Promise<yauzl.Entry | undefined>((resolve) => { next = resolve; zip.readEntry(); });
      next = undefined;
      if (failure) throw signal.aborted ? failure : ArchiveError.from('corrupted', failure);
      if (!entry) return;
      yield await zipEntry(zip, entry);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    zip.close();
  }
}

async function zipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<ArchiveEntry> {
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileName as unknown as Buffer, entry.extraFields, false);
  const unixMode = entry.versionMadeBy >> 8 === UNIX_HOST ? entry.externalFileAttributes >>> 16 : 0;
  const isDirectory = name.endsWith('/') || (unixMode & S_IFMT) === S_IFDIR;
  const isSymlink = !isDirectory && (unixMode & S_IFMT) === S_IFLNK;
  const data = () => zipData(zip, entry, name);
  const mode = unixMode & 0o7777 || (isDirectory ? 0o755 : 0o644);
  const base = { name, size: entry.uncompressedSize, mode, mtime: entry.getLastModDate(), data };
  if (isDirectory) return { ...base, type: 'directory' };
  if (isSymlink) {
    // A symlink's target is its data.
    const chunks: Buffer[] = [];
    for await (const chunk of data()) chunks.push(chunk);
    return { ...base, type: 'symlink', linkTarget: Buffer.concat(chunks).toString('utf8') };
  }
  return { ...base, type: 'file' };
}

/** yauzl checks the size; the CRC-32 is checked here (yauzl does not). */
async function* zipData(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string): AsyncGenerator<Buffer> {
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (error) {
    throw ArchiveError.from('corrupted', error);
  }
  let crc = 0;
  try {
    for await (const chunk of stream) {
      crc = crc32(chunk as Buffer, crc);
      yield chunk as Buffer;
    }
  } catch (error) {
    throw ArchiveError.from('corrupted', error);
  } finally {
    stream.destroy();
  }
  if (crc !== entry.crc32) throw new ArchiveError('corrupted', `entry "${name}": CRC-32 mismatch (the data was changed or damaged)`);
}

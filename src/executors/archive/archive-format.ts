// An archive's format: from its file name, or, for an archive to read whose name says nothing,
// from its first bytes (as Dagu identifies an archive by name and content).
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { ArchiveError } from './archive-error.ts';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'zip';

export const FORMAT_SUFFIXES = '.tar, .tar.gz, .tgz or .zip';

export function formatFromName(path: string): ArchiveFormat | undefined {
  const name = path.toLowerCase();
  if (name.endsWith('.tar.gz') || name.endsWith('.tgz')) return 'tar.gz';
  if (name.endsWith('.tar')) return 'tar';
  if (name.endsWith('.zip')) return 'zip';
  return undefined;
}

/** The format of an archive to read. A name without a known suffix: its first bytes decide. */
export async function formatOfSource(path: string): Promise<ArchiveFormat> {
  const named = formatFromName(path);
  if (named) return named;
  const head = Buffer.alloc(512);
  let length = 0;
  try {
    // Without blocking: a FIFO with no writer would hold a thread in open(2).
    const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      // Only a regular file is sniffed: reading a pipe's first bytes would take them from the archive.
      const info = await file.stat();
      if (info.isDirectory()) throw new ArchiveError('config', `source ${path} must be a file`);
      if (info.isFile()) ({ bytesRead: length } = await file.read(head, 0, head.length, 0));
    } finally {
      await file.close();
    }
  } catch (error) {
    throw ArchiveError.from('sourceNotFound', error);
  }
  const format = formatFromBytes(head.subarray(0, length));
  if (format) return format;
  throw new ArchiveError('formatDetection', `cannot tell the format of ${path}: name it ${FORMAT_SUFFIXES}, or give a tar, tar.gz or zip archive`);
}

export function formatFromBytes(head: Buffer): ArchiveFormat | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  // An empty zip holds only its end record.
  if (head.length >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip';
  if (head.length >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  return undefined;
}

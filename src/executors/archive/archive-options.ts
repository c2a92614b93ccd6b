// An archive step's settings, read from its command and config as Dagu reads them (weakly typed;
// keys in any case were spelt as documented when the definition was read), with Dagu's defaults:
// preservePaths on, everything else off.
import { resolve } from 'node:path';
import picomatch from 'picomatch';
import { weakBoolean, weakInteger, weakString, weakStringList, type Weak } from '../../core/index.ts';
import { ArchiveError } from './archive-error.ts';
import type { ArchiveFormat } from './archive-format.ts';

export interface ArchiveStep {
  operation: 'extract' | 'create' | 'list';
  /** As written: printed in the result. */
  source: string;
  destination: string;
  sourcePath: string;
  destinationPath: string;
  /** Whether an entry's path passes include and exclude. */
  select: (path: string, isDirectory: boolean) => boolean;
  /** The format named by `format`, if any: it wins over the name and the first bytes. */
  format?: ArchiveFormat;
  /** zlib's level for tar.gz; undefined: zlib's default. */
  compressionLevel?: number;
  overwrite: boolean;
  preservePaths: boolean;
  stripComponents: number;
  dryRun: boolean;
  followSymlinks: boolean;
  verifyIntegrity: boolean;
  continueOnError: boolean;
}

/** Format names Dagu knows, and the one troupe reads and writes for each (undefined: none). */
const FORMAT_NAMES: Record<string, ArchiveFormat | undefined> = {
  tar: 'tar', 'tar.gz': 'tar.gz', tgz: 'tar.gz', zip: 'zip',
  'tar.bz2': undefined, tbz2: undefined, tbz: undefined, 'tar.xz': undefined, txz: undefined, 'tar.zst': undefined,
  'tar.zstd': undefined, gz: undefined, bz2: undefined, xz: undefined, zst: undefined, zstd: undefined, lz4: undefined,
  '7z': undefined, rar: undefined,
};

export function readArchiveStep(command: string | undefined, config: Record<string, unknown>, workingDir: string): ArchiveStep {
  const operation = (command ?? '').trim().toLowerCase();
  if (operation !== 'extract' && operation !== 'create' && operation !== 'list') {
    throw new ArchiveError('config', `unsupported archive operation "${command ?? ''}": use extract, create or list`);
  }
  const value = <T>(key: string, read: (item: unknown) => Weak<T>): T => {
    const result = read(config[key]);
    if (!result.ok) throw new ArchiveError('config', `${key} ${result.message}`);
    return result.value;
  };
  const flag = (key: string, fallback = false) => value(key, (item) => weakBoolean(item, fallback));
  const source = value('source', weakString);
  const destination = value('destination', weakString);
  const dryRun = flag('dryRun');
  if (source === '') throw new ArchiveError('config', `source is required for ${operation}`);
  if (operation === 'create' && destination === '' && !dryRun) throw new ArchiveError('config', 'destination is required for create');
  const stripComponents = value('stripComponents', weakInteger);
  if (stripComponents < 0) throw new ArchiveError('config', 'stripComponents must be >= 0');
  if (value('password', weakString) !== '' && operation === 'create') throw new ArchiveError('config', 'password is only supported for extract/list operations');
  const level = value('compressionLevel', (item) => weakInteger(item, -1));
  // zlib's levels; -1 and 0 leave zlib's default, as Dagu's gzip writer does.
  if (level < -1 || level > 9) throw new ArchiveError('config', `compressionLevel must be between -1 and 9 (got ${level})`);
  const step: ArchiveStep = {
    operation,
    source,
    destination,
    sourcePath: resolve(workingDir, source),
    destinationPath: resolve(workingDir, destination === '' ? '.' : destination),
    select: selector(value('include', weakStringList), value('exclude', weakStringList)),
    overwrite: flag('overwrite'),
    preservePaths: flag('preservePaths', true),
    stripComponents,
    dryRun,
    followSymlinks: flag('followSymlinks'),
    verifyIntegrity: flag('verifyIntegrity'),
    continueOnError: flag('continueOnError'),
  };
  if (level > 0) step.compressionLevel = level;
  const format = value('format', weakString).trim().toLowerCase();
  if (format !== '') {
    if (!Object.hasOwn(FORMAT_NAMES, format)) throw new ArchiveError('formatDetection', `unknown format "${format}"`);
    const known = FORMAT_NAMES[format];
    if (!known) throw new ArchiveError('formatDetection', `format "${format}" is not supported: use tar, tar.gz (tgz) or zip`);
    step.format = known;
  }
  return step;
}

/**
 * An entry passes when it matches an include pattern (or there is none) and no exclude pattern.
 * `*` matches dotfiles too, and `dir/**` matches dir itself, as Dagu's doublestar does.
 */
function selector(include: string[], exclude: string[]): (path: string, isDirectory: boolean) => boolean {
  const compile = (patterns: string[]) => {
    const kept = patterns.map((pattern) => pattern.trim()).filter((pattern) => pattern !== '');
    for (const pattern of kept) if (!validGlob(pattern)) throw new ArchiveError('config', `invalid glob pattern "${pattern}"`);
    return kept.length > 0 ? picomatch(kept, { dot: true }) : undefined;
  };
  const included = compile(include);
  const excluded = compile(exclude);
  return (path) => (included === undefined || included(path)) && (excluded === undefined || !excluded(path));
}

/** doublestar's ValidatePattern: every `[` and `{` closed, no `\` at the end. */
export function validGlob(pattern: string): boolean {
  let braces = 0;
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at];
    if (char === '\\') {
      if (at === pattern.length - 1) return false;
      at++;
    } else if (char === '[') {
      const close = pattern.indexOf(']', at + (pattern[at + 1] === '^' || pattern[at + 1] === '!' ? 3 : 2));
      if (close === -1 || close === at + 1) return false;
      at = close;
    } else if (char === '{') {
      braces++;
    } else if (char === '}' && braces > 0) {
      braces--;
    }
  }
  return braces === 0;
}

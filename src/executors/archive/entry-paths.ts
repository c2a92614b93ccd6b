// Where an archive entry may go: pure checks on names and link targets, and the way Dagu prints
// an entry's mode and times.
import { posix } from 'node:path';

export type Checked = { kind: 'ok'; path: string } | { kind: 'refused'; reason: string };

/**
 * The entry's path relative to the destination ('' for the archive's root), or why it is refused:
 * an absolute path, or one whose `..` leads out of the destination.
 */
export function entryPath(name: string): Checked {
  if (name.includes('\0')) return { kind: 'refused', reason: `entry "${name}" has a NUL byte in its name` };
  if (name.startsWith('/') || /^[A-Za-z]:[\\/]/.test(name)) return { kind: 'refused', reason: `entry "${name}" has an absolute path` };
  const normal = posix.normalize(name).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../')) return { kind: 'refused', reason: `entry "${name}" points outside the destination` };
  return { kind: 'ok', path: normal === '.' ? '' : normal };
}

/** A symlink at `path` (relative to the destination) may point to `target` only inside the destination. */
export function symlinkTarget(name: string, path: string, target: string): Checked {
  if (target === '') return { kind: 'refused', reason: `symlink "${name}" has an empty target` };
  if (posix.isAbsolute(target)) return { kind: 'refused', reason: `symlink "${name}" points to the absolute path "${target}"` };
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === '..' || resolved.startsWith('../')) return { kind: 'refused', reason: `symlink "${name}" points outside the destination ("${target}")` };
  return { kind: 'ok', path: target };
}

/** Go's FileMode.String() for a file, directory or symlink: "-rw-r--r--", "drwxr-xr-x", "Lrwxrwxrwx". */
export function goFileMode(type: 'file' | 'directory' | 'symlink' | 'hardlink' | 'other', mode: number): string {
  const kind = type === 'directory' ? 'd' : type === 'symlink' ? 'L' : type === 'other' ? '?' : '';
  const special = `${mode & 0o4000 ? 'u' : ''}${mode & 0o2000 ? 'g' : ''}${mode & 0o1000 ? 't' : ''}`;
  const bits = 'rwxrwxrwx'.split('').map((letter, at) => (mode & (1 << (8 - at)) ? letter : '-')).join('');
  const prefix = kind + special;
  return `${prefix === '' ? '-' : prefix}${bits}`;
}

/** Go's time.Time in JSON (RFC 3339 with nanoseconds, trailing zeros dropped). */
export function goTime(date: Date): string {
  return date.toISOString().replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits === '' ? 'Z' : `.${digits}Z`));
}

/** Go's time.Duration.String() for a duration in milliseconds ("1.5ms", "2.003s"). */
export function goDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1) return `${trim((ms * 1000).toFixed(3))}µs`;
  if (ms < 1000) return `${trim(ms.toFixed(6))}ms`;
  return `${trim((ms / 1000).toFixed(9))}s`;
}

function trim(number: string): string {
  return number.includes('.') ? number.replace(/\.?0+$/, '') : number;
}

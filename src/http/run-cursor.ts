// The opaque cursor of `GET /dag-runs?limit=`: the position of the last run a page returned.
import type { ListPosition } from '../core/index.ts';

/** Changed if the position ever changes shape: an old cursor is then refused, not misread. */
const CURSOR_VERSION = 1;

/** A position as the opaque cursor a client hands back. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([CURSOR_VERSION, position.createdAtMs, position.name, position.dagRunId])).toString('base64url');
}

/** The position a cursor names; undefined for anything encodeCursor did not make. */
export function decodeCursor(cursor: string): ListPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(cursor)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 4 || value[0] !== CURSOR_VERSION) return undefined;
  const [, createdAtMs, name, dagRunId] = value as unknown[];
  if (!Number.isSafeInteger(createdAtMs) || (createdAtMs as number) < 0 || typeof name !== 'string' || typeof dagRunId !== 'string') return undefined;
  return { createdAtMs: createdAtMs as number, name, dagRunId };
}

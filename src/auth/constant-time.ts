// Comparing secrets without the time taken telling how much of a guess was right.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Digests first: timingSafeEqual needs equal lengths, and the lengths must not leak either. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

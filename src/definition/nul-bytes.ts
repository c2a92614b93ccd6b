// A NUL byte cannot be part of a path, an argument or an environment value: the system calls a run
// makes would refuse it. It is refused where the definition is read, with the field that holds it.
import type { Path } from './issues.ts';

/** The YAML escapes that yield a NUL, and the byte itself: most texts have none, and skip the walk. */
const nulOrEscape = /\0|\\(?:0|x00|u0000|U00000000)/;

/** Whether a document of `text` may hold a NUL byte; tested once per text, not per document. */
export const mayHoldNul = (text: string) => nulOrEscape.test(text);

/** The paths of the keys and values of a document that hold a NUL byte. */
export function nulBytePaths(value: unknown): Path[] {
  const found: Path[] = [];
  const seen = new Set<object>();
  // Its own stack: a deeply nested document must not overflow the call stack.
  const stack: Array<{ node: unknown; path: Path }> = [{ node: value, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\0')) found.push(path);
      continue;
    }
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    const entries: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((item, index) => [index, item]) : Object.entries(node);
    for (const [key, item] of entries) {
      if (typeof key === 'string' && key.includes('\0')) found.push([...path, key]);
      stack.push({ node: item, path: [...path, key] });
    }
  }
  return found.reverse();
}

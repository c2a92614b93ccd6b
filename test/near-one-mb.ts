// Definitions near the 1 MiB body limit, for the large-spec tests and the parse benchmarks.
export const MB = 1024 * 1024;

/**
 * `head`, then `item(0)`, `item(1)`... until the text reaches `limit` bytes (by default 0.9 MiB,
 * room for the JSON around it in a request), then `tail(count)` of the items.
 */
export function nearOneMb(head: string, item: (i: number) => string, tail: (count: number) => string = () => '', limit = MB * 0.9): string {
  const parts = [head];
  let size = head.length;
  let count = 0;
  while (size < limit) {
    const text = item(count++);
    parts.push(text);
    size += text.length;
  }
  return parts.join('') + tail(count);
}

// How deep the flow collections ([ ], { }) of a YAML text nest, measured before the parser sees
// it. The parser recurses once per level; tens of thousands of levels (one byte each) bring it to
// the edge of the stack, where V8 may abort the whole process while compiling a regular
// expression instead of throwing a RangeError. The scan errs towards counting: a bracket in plain
// or block text counts, one in quoted text or a comment does not.

/** Far deeper than a definition needs (flow style rarely passes five), far from the stack's limit. */
export const MAX_FLOW_NESTING = 100;

/** A quote opens a quoted scalar only where a scalar can start (YAML 1.2, 7.3); elsewhere it is text. */
const scalarStart = new Set([undefined, ' ', '\t', '\n', '\r', '[', '{', ',']);

/** The line (1-based) where flow collections first nest deeper than `limit`; undefined when they never do. */
export function flowNestingTooDeep(text: string, limit = MAX_FLOW_NESTING): number | undefined {
  let depth = 0;
  let line = 1;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\n') line++;
    if (quote === '"') {
      if (char === '\\') i++;
      else if (char === '"') quote = undefined;
      continue;
    }
    if (quote === "'") {
      if (char === "'" && text[i + 1] === "'") i++;
      else if (char === "'") quote = undefined;
      continue;
    }
    const before = text[i - 1];
    if ((char === '"' || char === "'") && scalarStart.has(before)) {
      quote = char;
    } else if (char === '#' && (before === undefined || before === ' ' || before === '\t' || before === '\n')) {
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      i = end - 1;
    } else if (char === '[' || char === '{') {
      if (++depth > limit) return line;
    } else if ((char === ']' || char === '}') && depth > 0) {
      depth--;
    }
  }
  return undefined;
}

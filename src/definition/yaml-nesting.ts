// How deep the collections of a YAML text nest, measured before the parser sees it. The composer
// recurses once per level; flow brackets (one byte a level) or compact sequences (`- - - x`, two
// bytes) bring it to the edge of the stack within a small request, where V8 may abort the whole
// process while compiling a regular expression instead of throwing a RangeError. The scan errs
// towards counting: brackets in plain or block text count, brackets in quoted text or comments do not.

/** Far deeper than a definition needs (flow style rarely passes five levels), far from the stack's limit. */
export const MAX_NESTING = 100;

/** A quote opens a quoted scalar only where a scalar can start (YAML 1.2); elsewhere it is text. */
const scalarStart = new Set([undefined, ' ', '\t', '\n', '\r', '[', '{', ',']);
const blank = (char: string | undefined) => char === undefined || char === ' ' || char === '\t' || char === '\n' || char === '\r';

/** The line (1-based) where collections first nest deeper than `limit`; undefined when they never do. */
export function nestingTooDeep(text: string, limit = MAX_NESTING): number | undefined {
  let flow = 0;
  let line = 1;
  let quote: '"' | "'" | undefined;
  /** Indentations of the open block levels, outermost first. */
  const indents: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if ((i === 0 || text[i - 1] === '\n') && quote === undefined && flow === 0) {
      if (blockDepth(text, i, indents) > limit) return line;
    }
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
    } else if (char === '#' && blank(before)) {
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      i = end - 1;
    } else if (char === '[' || char === '{') {
      if (++flow + indents.length > limit) return line;
    } else if ((char === ']' || char === '}') && flow > 0) {
      flow--;
    }
  }
  return undefined;
}

/** Block levels open at the line starting at `start`: its indentation's place among the open ones, plus compact `- `, `? `, `: ` indicators. */
function blockDepth(text: string, start: number, indents: number[]): number {
  let at = start;
  while (text[at] === ' ') at++;
  if (text[at] === '\n' || text[at] === '\r' || text[at] === '#' || at === text.length) return indents.length;
  const indent = at - start;
  while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
  indents.push(indent);
  let compact = 0;
  while ((text[at] === '-' || text[at] === '?' || text[at] === ':') && blank(text[at + 1]) && text[at + 1] !== '\n') {
    compact++;
    at += 2;
    while (text[at] === ' ' || text[at] === '\t') at++;
  }
  return indents.length + compact;
}

// Backtick command substitution in env values, param defaults and conditions (definition format: variable references):
// finding the commands and putting their output back. Running them is the runtime's job (the pool).

/** The commands between backticks, in order; a backslash-escaped backtick is not one. */
export function backtickCommands(text: string): string[] {
  return backtickParts(text).filter((part): part is { command: string } => 'command' in part).map((part) => part.command);
}

/** `text` with each backtick command replaced by the matching output, in order. */
export function substituteBackticks(text: string, outputs: string[]): string {
  let next = 0;
  return backtickParts(text).map((part) => ('command' in part ? outputs[next++] ?? '' : part.literal)).join('');
}

/** The text as literal parts and backtick commands, in order. */
export function backtickParts(text: string): Array<{ literal: string } | { command: string }> {
  const out: Array<{ literal: string } | { command: string }> = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\' && text[i + 1] === '`') {
      literal += '`';
      i++;
      continue;
    }
    if (char === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) {
        literal += text.slice(i);
        break;
      }
      if (literal) out.push({ literal });
      literal = '';
      out.push({ command: text.slice(i + 1, end) });
      i = end;
      continue;
    }
    literal += char;
  }
  if (literal) out.push({ literal });
  return out;
}

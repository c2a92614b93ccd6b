// Definition problems read `path (line N): message`; the line, when named, lets the editor point at it.

export interface Problem { text: string; line: number | null }

export function problems(errors: string[]): Problem[] {
  return errors.map((text) => {
    const m = /\(line (\d+)\)/.exec(text) ?? /\bline (\d+)\b/.exec(text);
    return { text, line: m ? Number(m[1]) : null };
  });
}

/** The character range of a 1-based line of `text`, for selecting it in a textarea. */
export function lineRange(text: string, line: number): [number, number] {
  let start = 0;
  for (let i = 1; i < line; i++) {
    const next = text.indexOf('\n', start);
    if (next === -1) return [text.length, text.length];
    start = next + 1;
  }
  const end = text.indexOf('\n', start);
  return [start, end === -1 ? text.length : end];
}

// Turns a log line with ANSI escape sequences into styled text segments. Only SGR colours
// (30-37, 90-97, 39), bold (1, 22) and reset (0) are kept; every other escape sequence is
// dropped, so no escape character ever reaches the page. Segments are rendered as text nodes.

export interface AnsiState { fg: number | null; bold: boolean }
export interface Segment { text: string; fg: number | null; bold: boolean }

export const plain: AnsiState = { fg: null, bold: false };

// CSI sequences (ESC [ params final), OSC sequences (ESC ] ... BEL or ESC \), other two-byte escapes.
const escape = /\x1b\[([0-9;?]*)([ -\/]*[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;

function applySgr(state: AnsiState, params: string): AnsiState {
  let { fg, bold } = state;
  const codes = params === '' ? [0] : params.split(';').map((p) => (p === '' ? 0 : Number(p)));
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    if (code === 0) {
      fg = null;
      bold = false;
    } else if (code === 1) bold = true;
    else if (code === 22) bold = false;
    else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) fg = code;
    else if (code === 39) fg = null;
    // 256-colour and true-colour forms carry their own arguments: skip them, keep the colour.
    else if (code === 38 || code === 48) i += codes[i + 1] === 5 ? 2 : codes[i + 1] === 2 ? 4 : 0;
  }
  return { fg, bold };
}

export function parseAnsi(line: string, start: AnsiState = plain): { segments: Segment[]; end: AnsiState } {
  const segments: Segment[] = [];
  let state = start;
  let last = 0;
  const push = (text: string) => {
    // Other control characters (a stray BEL, backspace) are not shown either.
    const clean = text.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
    if (clean) segments.push({ text: clean, fg: state.fg, bold: state.bold });
  };
  escape.lastIndex = 0;
  for (let m = escape.exec(line); m !== null; m = escape.exec(line)) {
    push(line.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] === 'm') state = applySgr(state, m[1]);
  }
  push(line.slice(last));
  return { segments, end: state };
}

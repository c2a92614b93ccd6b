// Just enough POSIX shell syntax to know how a shell will read a reference written into its code:
// unquoted, inside double quotes (or an unquoted here-document), inside single quotes (or bash's
// `$'...'`), or where it never expands (a comment, a here-document with a quoted delimiter). And
// which interpreters are POSIX shells at all. Not a parser: `$(...)` and backticks are read as the
// text around them.
import { splitWords } from '../../definition/index.ts';

export type ShellContext = 'code' | 'double' | 'single' | 'literal';

export interface ShellSegment {
  text: string;
  context: ShellContext;
  /** A here-document body's: the line that ends it. */
  delimiter?: string;
}

interface HereDocument {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
}

const WORD_BREAK = /[\s;&|()<>]/;

/** `code` cut where its quoting context changes; the segments joined give `code` back. */
export function shellSegments(code: string): ShellSegment[] {
  const segments: ShellSegment[] = [];
  let start = 0;
  let context = 'code' as ShellContext;
  let delimiter: string | undefined;
  /** `ending`: the delimiter of the here-document body that begins at `at`. */
  const enter = (at: number, next: ShellContext, ending?: string) => {
    const last = segments.at(-1);
    if (at > start && last?.context === context && last.delimiter === delimiter) last.text += code.slice(start, at);
    else if (at > start) segments.push({ text: code.slice(start, at), context, ...(delimiter !== undefined ? { delimiter } : {}) });
    start = at;
    context = next;
    delimiter = ending;
  };
  // Inside bash's $'...' a backslash escapes a single quote.
  let ansi = false;
  const pending: HereDocument[] = [];
  let i = 0;
  while (i < code.length) {
    const ch = code[i];
    if (context === 'single') {
      if (ansi && ch === '\\') i++;
      else if (ch === "'") enter(i + 1, 'code');
      i++;
    } else if (context === 'double') {
      if (ch === '\\') i += 2;
      else {
        if (ch === '"') enter(i + 1, 'code');
        i++;
      }
    } else if (ch === '\\') {
      i += 2;
    } else if (ch === '$' && code[i + 1] === "'") {
      enter(i, 'single');
      ansi = true;
      i += 2;
    } else if (ch === "'" || ch === '"') {
      enter(i, ch === "'" ? 'single' : 'double');
      ansi = false;
      i++;
    } else if (ch === '#' && (i === 0 || WORD_BREAK.test(code[i - 1]))) {
      const end = lineEnd(code, i);
      enter(i, 'literal');
      enter(end, 'code');
      i = end;
    } else if (code.startsWith('<<<', i)) {
      // A here-string: its word is read as any other.
      i += 3;
    } else if (code.startsWith('<<', i)) {
      const { document, next } = hereDocumentAt(code, i + 2);
      if (document) pending.push(document);
      i = next;
    } else if (ch === '\n' && pending.length > 0) {
      i = readBodies(code, i + 1, pending.splice(0), enter);
    } else {
      i++;
    }
  }
  enter(code.length, context);
  return segments;
}

const CODE: ShellSegment = { text: '', context: 'code' };

/** The segment of the character at an offset of the code `segments` were cut from. */
export function shellSegmentAt(segments: readonly ShellSegment[]): (at: number) => ShellSegment {
  // References are looked up from left to right: the search goes on from the last one's segment.
  let index = 0;
  let start = 0;
  return (at) => {
    if (at < start) [index, start] = [0, 0];
    while (index < segments.length - 1 && at >= start + segments[index].text.length) {
      start += segments[index].text.length;
      index++;
    }
    return segments[index] ?? CODE;
  };
}

/** The here-document operator's word after `<<` (or `<<-`), and where the code goes on. */
function hereDocumentAt(code: string, at: number): { document?: HereDocument; next: number } {
  let i = at;
  const stripTabs = code[i] === '-';
  if (stripTabs) i++;
  while (code[i] === ' ' || code[i] === '\t') i++;
  let word = '';
  let quoted = false;
  let quote: string | undefined;
  for (; i < code.length; i++) {
    const ch = code[i];
    if (quote) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      quoted = true;
    } else if (ch === '\\' && i + 1 < code.length) {
      quoted = true;
      word += code[++i];
    } else if (WORD_BREAK.test(ch)) {
      break;
    } else {
      word += ch;
    }
  }
  return { document: word === '' ? undefined : { delimiter: word, quoted, stripTabs }, next: i };
}

/** Reads the bodies of the here-documents opened on the line that ended before `at`. */
function readBodies(code: string, at: number, documents: HereDocument[], enter: (at: number, next: ShellContext, ending?: string) => void): number {
  let i = at;
  for (const document of documents) {
    enter(i, document.quoted ? 'literal' : 'double', document.delimiter);
    while (i < code.length) {
      const end = lineEnd(code, i);
      const line = code.slice(i, end);
      if ((document.stripTabs ? line.replace(/^\t+/, '') : line) === document.delimiter) {
        enter(i, 'code');
        i = end + 1;
        break;
      }
      i = end + 1;
    }
  }
  enter(Math.min(i, code.length), 'code');
  return i;
}

function lineEnd(code: string, from: number): number {
  const end = code.indexOf('\n', from);
  return end < 0 ? code.length : end;
}

const POSIX_SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'busybox']);

/** Whether an interpreter's command line (`bash -e`, `/usr/bin/env zsh`) starts a POSIX shell. */
export function isPosixShell(argv: readonly string[]): boolean {
  const words = basename(argv[0] ?? '') === 'env' ? argv.slice(1).filter((word) => !word.startsWith('-') && !word.includes('=')) : argv;
  return POSIX_SHELLS.has(basename(words[0] ?? ''));
}

/** The interpreter of a script's shebang line, as words; none without one. */
export function shebangOf(script: string): string[] | undefined {
  if (!script.startsWith('#!')) return undefined;
  return lineEnd(script, 0) > 2 ? splitWords(script.slice(2, lineEnd(script, 0))) : undefined;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

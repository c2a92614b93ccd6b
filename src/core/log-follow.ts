// Following a log file as it grows: the shapes a follower and its reader share, and the pure
// splitting of bytes into lines that remembers where each line ends in the file.

/** A line of a log: its text, without the line break, and the byte offset just after it in the file. */
export interface LogLine {
  text: string;
  end: number;
}

export interface LogFollowOptions {
  /** The byte of the file to start from (0: its beginning). */
  from: number;
  /** Lines as they are read, in order. Answers false when the reader is behind: reading pauses until `resume`. */
  lines(lines: readonly LogLine[]): boolean;
  /** After `finish`, once the file was read to its end: `nextOffset` is the byte after the last line given. */
  ended(nextOffset: number): void;
  /** Reading failed (a missing file is not a failure: it is waited for). Nothing more is given. */
  failed?(error: Error): void;
  /** How often the file is looked at besides the watch on it. */
  pollMs?: number;
  /**
   * The last line as written so far, when a read reaches the end of what is written and that line
   * has no line break yet (a prompt, a progress mark); told again each time it grew. The line is
   * still given whole to `lines` once it ends.
   */
  open?(text: string): void;
}

/** A log being followed. */
export interface LogFollow {
  /** The reader caught up after `lines` answered false: reading goes on. */
  resume(): void;
  /** The writer is done: what is left is read, the last line even without its line break, then `ended`. */
  finish(): void;
  /** Stops following (the reader left); nothing more is given. */
  close(): void;
}

/** Past this many bytes without a line break, what is held is given as a line all the same (as masking does). */
export const LONGEST_HELD_LINE = 64 * 1024;

/**
 * Bytes of a file, in order, into whole lines. A line is decoded as UTF-8 once whole: a line break
 * is never part of a multi-byte character, so a character cut across two reads stays whole.
 */
export class LogLineSplitter {
  private held: Buffer = Buffer.alloc(0);

  /** `from`: the file offset of the first byte pushed. */
  constructor(private offset: number) {}

  /** The whole lines `bytes` completes. */
  push(bytes: Buffer): LogLine[] {
    const data = this.held.length === 0 ? bytes : Buffer.concat([this.held, bytes]);
    const lines: LogLine[] = [];
    let start = 0;
    for (let index = data.indexOf(10); index >= 0; index = data.indexOf(10, start)) {
      lines.push({ text: data.toString('utf8', start, index), end: this.offset + index + 1 });
      start = index + 1;
    }
    let rest = data.subarray(start);
    const base = this.offset + start;
    if (rest.length > LONGEST_HELD_LINE) {
      // Cut before a character the read split, so that it is decoded whole with what follows.
      const cut = characterBoundary(rest);
      lines.push({ text: rest.toString('utf8', 0, cut), end: base + cut });
      rest = rest.subarray(cut);
      this.offset = base + cut;
    } else {
      this.offset = base;
    }
    // A copy: `bytes` may be a buffer its reader fills again.
    this.held = Buffer.from(rest);
    return lines;
  }

  /** The line begun and not ended yet, as written so far ('' when none); a character a read split is left for later. */
  get open(): string {
    return this.held.toString('utf8', 0, characterBoundary(this.held));
  }

  /** What is held without a line break, as a last line (the writer is done); undefined when nothing is. */
  end(): LogLine | undefined {
    if (this.held.length === 0) return undefined;
    const line = { text: this.held.toString('utf8'), end: this.offset + this.held.length };
    this.offset = line.end;
    this.held = Buffer.alloc(0);
    return line;
  }
}

/** The length of `bytes` without a trailing UTF-8 character that is not complete. */
function characterBoundary(bytes: Buffer): number {
  const length = bytes.length;
  for (let back = 1; back <= 4 && back <= length; back++) {
    const byte = bytes[length - back];
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return size > back ? length - back : length;
  }
  return length;
}

// A step's output shown while the step runs (`exec`), read from its log through the backend, as
// `tail -f` would show it: each read asks for the whole lines from the byte where the last one
// ended (the log API's byteOffset), so a poll reads only what was written since.
//
// While the step runs, the log API holds back a last line without its newline: it may still be
// being written. That line is looked at apart (the log's last line, as it stands) and shown once a
// line follows it, the step ends, or it has stayed the same for a moment (a prompt, or a progress
// mark written without a newline). Shown for that last reason and then continued, its
// continuation is shown as a line of its own.
import type { LogPage, LogPageQuery } from './backend/types.ts';

/** Polls a held line must stay the same for before it is shown as it stands. */
const SETTLED_POLLS = 2;

export class OutputTail {
  /** The byte of the log read next: every line before it has been shown whole. */
  private next = 0;
  /** The whole lines before `next`, and the last of them. */
  private lines = 0;
  private lastLine: string | undefined;
  /** What was already shown of the line at `next`, for a line shown while still being written. */
  private shownOfNext = '';
  /** The unshown rest of the line at `next` as the last poll saw it, and how many polls in a row saw it so. */
  private held = '';
  private heldPolls = 0;

  constructor(private readonly read: (query: LogPageQuery) => Promise<LogPage>, private readonly show: (text: string) => void) {}

  /** Shows what was written since the last poll. `ended`: the step has ended, so its last line is whole (and read with the rest). */
  async poll(ended: boolean): Promise<void> {
    let read = false;
    for (;;) {
      const page = await this.read({ byteOffset: this.next });
      if (page.lineCount > 0) {
        const lines = page.content.split('\n');
        this.lastLine = lines[lines.length - 1];
        this.lines += lines.length;
        lines[0] = this.rest(lines[0]);
        // A line shown as it stood, then found whole with nothing more: shown already.
        const shown = lines[0] === '' && this.shownOfNext !== '' ? lines.slice(1) : lines;
        if (shown.length > 0) this.show(shown.join('\n'));
        this.next = page.nextOffset;
        read = true;
        this.shownOfNext = '';
        this.held = '';
        this.heldPolls = 0;
      }
      if (!page.hasMore) break;
    }
    // Looked at only when no whole line came: while lines come, what follows them is not a prompt
    // yet, and the look reads the end of the log (all of a log up to 4 MiB, counted exactly).
    if (!ended && !read) await this.lookAtOpenLine();
  }

  /**
   * The log's last line, when it begins at `next` and has no newline yet. Its last line ends at
   * `next` when there is none: the line count (exact for a file read whole) tells them apart, else
   * the text (a line being written that repeats the one before is then not seen until it ends).
   */
  private async lookAtOpenLine(): Promise<void> {
    const last = await this.read({ tail: 1 });
    if (last.lineCount === 0 || last.nextOffset !== this.next) return;
    const open = last.isEstimate ? last.content !== this.lastLine : last.totalLines === this.lines + 1;
    if (open) this.hold(this.rest(last.content));
  }

  /** The line at `next` as read now, less what of it was shown already. */
  private rest(line: string): string {
    return this.shownOfNext !== '' && line.startsWith(this.shownOfNext) ? line.slice(this.shownOfNext.length) : line;
  }

  private hold(rest: string): void {
    if (rest === '' || rest !== this.held) {
      this.held = rest;
      this.heldPolls = rest === '' ? 0 : 1;
      return;
    }
    if (++this.heldPolls < SETTLED_POLLS) return;
    this.show(rest);
    this.shownOfNext += rest;
    this.held = '';
    this.heldPolls = 0;
  }
}

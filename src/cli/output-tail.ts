// A step's output shown while the step runs (`exec`), read a page of lines at a time from its log
// through the backend, as `tail -f` would show it.
//
// The log API answers lines, not bytes: the last line it gives may still be being written. While
// the step runs that line is held back until a later line begins, the step ends, or it has stayed
// the same for a moment (a prompt, or a progress mark written without a newline). Shown for that
// last reason and then continued, its continuation is shown as a line of its own.
import type { LogPage } from './backend/types.ts';

/** Polls a held line must stay the same for before it is shown as it stands. */
const SETTLED_POLLS = 2;

export class OutputTail {
  /** The 1-based line of the log read next: every line before it has been shown whole. */
  private next = 1;
  /** What was already shown of line `next`, for a line shown while still being written. */
  private shownOfNext = '';
  /** The unshown rest of line `next` as the last poll read it, and how many polls in a row read it so. */
  private held = '';
  private heldPolls = 0;

  constructor(private readonly read: (offset: number) => Promise<LogPage>, private readonly show: (text: string) => void) {}

  /** Shows what was written since the last poll. `ended`: the step has ended, so its last line is whole. */
  async poll(ended: boolean): Promise<void> {
    for (;;) {
      const page = await this.read(this.next);
      if (page.lineCount === 0) return;
      const lines = page.content.split('\n');
      // With more lines after this page, its last line is followed by another: it is whole.
      const open = ended || page.hasMore ? undefined : lines.pop();
      if (lines.length > 0) {
        lines[0] = this.rest(lines[0]);
        // A line shown as it stood, then found whole with nothing more: shown already.
        const shown = lines[0] === '' && this.shownOfNext !== '' ? lines.slice(1) : lines;
        if (shown.length > 0) this.show(shown.join('\n'));
        this.next += lines.length;
        this.shownOfNext = '';
        this.held = '';
        this.heldPolls = 0;
      }
      if (open !== undefined) this.hold(this.rest(open));
      if (!page.hasMore) return;
    }
  }

  /** Line `next` as read now, less what of it was shown already. */
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

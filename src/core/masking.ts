// Replaces secret values with ******* (longest first, every occurrence): in step output (executors)
// and in whatever else of a run reaches a record, a log or a response (actors).

export const MASK = '*******';

export function createMasker(secrets: readonly string[]): (text: string) => string {
  const values = [...new Set(secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const value of values) out = out.split(value).join(MASK);
    return out;
  };
}

/** Past this many characters without a line break, what is held is masked and let go anyway. */
const LONGEST_HELD_LINE = 64 * 1024;

/**
 * Masks a stream of text whole lines at a time, so that a secret split across two chunks is still
 * found. `push` answers what is ready to write, masked; `end` what was held back.
 */
export class LineMasker {
  private pending = '';

  constructor(private readonly mask: (text: string) => string) {}

  push(text: string): string {
    this.pending += text;
    const cut = this.pending.lastIndexOf('\n');
    let ready = '';
    if (cut >= 0) {
      ready = this.pending.slice(0, cut + 1);
      this.pending = this.pending.slice(cut + 1);
    } else if (this.pending.length > LONGEST_HELD_LINE) {
      ready = this.pending;
      this.pending = '';
    }
    return ready === '' ? '' : this.mask(ready);
  }

  end(): string {
    const rest = this.pending;
    this.pending = '';
    return rest === '' ? '' : this.mask(rest);
  }
}

// What the steps of a followed run write, shown as they write it (`start`, `retry`, `restart`,
// `logs --follow`): each step's log followed through the backend from the moment the step is
// first seen started, to the step's end.
import type { Backend, RunView } from './backend/types.ts';

export type LogStream = 'stdout' | 'stderr';

/** A line a step wrote, to show. */
export type ShowLine = (step: string, stream: LogStream, line: string) => void;

const FINAL_NODE = new Set(['succeeded', 'failed', 'aborted', 'skipped', 'partially_succeeded']);

/** How long a line with no line break yet must stay as it is before it is shown as it stands. */
const OPEN_LINE_SETTLE_MS = 300;

export interface StepOutputOptions {
  /**
   * Show a line the step has begun and not ended once it has stayed the same a moment (a prompt,
   * a progress mark); what follows on that line is then shown as a line of its own.
   */
  partialLines?: boolean;
}

export class StepOutputs {
  /** Each followed step's followers, done once its logs were read to their end. */
  private readonly followers = new Map<string, Promise<void>>();
  /** The start time each step had in an attempt before this one (a retry): not followed again until it starts anew. */
  private readonly before = new Map<string, string>();
  private readonly stopping = new AbortController();

  constructor(private readonly backend: Backend, private readonly run: { name: string; dagRunId: string }, private readonly streams: readonly LogStream[],
    private readonly show: ShowLine, private readonly warn: (text: string) => void = (text) => process.stderr.write(text),
    private readonly options: StepOutputOptions = {}) {}

  /** The steps as an attempt before this one left them (a retry): their output was shown then, or is not this attempt's. */
  seed(run: RunView): void {
    for (const node of run.nodes) if (node.startedAt !== '') this.before.set(node.step.name, node.startedAt);
  }

  /** Steps not to follow (their logs were read whole already). */
  skip(steps: Iterable<string>): void {
    for (const step of steps) this.followers.set(step, Promise.resolve());
  }

  /** Begins following the steps `run` shows started, each once. */
  seen(run: RunView): void {
    for (const node of run.nodes) {
      const step = node.step.name;
      if (node.startedAt === '' || this.followers.has(step) || this.before.get(step) === node.startedAt) continue;
      this.followers.set(step, this.follow(step));
    }
  }

  /** Resolves once every step `run` shows ended has had its logs read to their end. */
  async settled(run: RunView): Promise<void> {
    await Promise.all(run.nodes.filter((node) => FINAL_NODE.has(node.statusLabel)).map((node) => this.followers.get(node.step.name)));
  }

  /** The run has ended: what its steps wrote is shown to the end. */
  async finish(run: RunView): Promise<void> {
    this.seen(run);
    await Promise.all(this.followers.values());
  }

  /** Stops following (leaving early). */
  close(): void {
    this.stopping.abort();
  }

  private async follow(step: string): Promise<void> {
    await Promise.all(this.streams.map(async (stream) => {
      const show = (text: string) => this.show(step, stream, text);
      const open = this.options.partialLines ? new OpenLine(show) : undefined;
      try {
        await this.backend.followStepLog(this.run.name, this.run.dagRunId, step, stream, open ? (line) => open.line(line) : show,
          { signal: this.stopping.signal, ...(open ? { onPartial: (text: string) => open.partial(text) } : {}) });
      } catch (error) {
        if (!this.stopping.signal.aborted) this.warn(`troupe: the ${stream} of step ${step} could not be followed (${(error as Error).message})\n`);
      } finally {
        open?.close();
      }
    }));
  }
}

/**
 * A log's last line while it is written: held while it grows, shown as it stands once it has
 * stayed the same a moment; the rest of it, when it ends, shown as a line of its own.
 */
class OpenLine {
  /** What of the line being written was shown already. */
  private shown = '';
  private held: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly show: (text: string) => void) {}

  /** The line as written so far. */
  partial(text: string): void {
    this.held = text;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.settled(), OPEN_LINE_SETTLE_MS);
  }

  /** The line, whole. */
  line(text: string): void {
    this.cancel();
    const shownBefore = this.shown;
    this.shown = '';
    const rest = this.rest(text, shownBefore);
    // Shown as it stood, then ended with nothing more: shown already.
    if (rest === '' && shownBefore !== '') return;
    this.show(rest);
  }

  close(): void {
    this.cancel();
  }

  private settled(): void {
    const text = this.held;
    this.held = undefined;
    if (text === undefined) return;
    const rest = this.rest(text, this.shown);
    if (rest === '') return;
    this.show(rest);
    this.shown = text;
  }

  private rest(text: string, shown: string): string {
    return shown !== '' && text.startsWith(shown) ? text.slice(shown.length) : text;
  }

  private cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held = undefined;
  }
}

// A run's progress as it happens: each step as it starts and ends. On a terminal, a live view
// redrawn in place; otherwise one plain line per transition; with --json, one JSON object a line.
import type { NodeView, RunView } from './backend/types.ts';
import { between, duration, time } from './output.ts';
import { withoutStderrTail } from '../core/index.ts';

export type ProgressMode = 'live' | 'plain' | 'json';

const FINAL_NODE = new Set(['succeeded', 'failed', 'aborted', 'skipped', 'partially_succeeded']);
const MARK: Record<string, string> = {
  not_started: '·', running: '▶', succeeded: '✔', failed: '✘', aborted: '■', skipped: '↷', partially_succeeded: '◐',
};

/** A step seen for the first time once it had ended (polled over HTTP, a short one): its start is told first. */
const seenEnded = (node: NodeView) => FINAL_NODE.has(node.statusLabel) && node.statusLabel !== 'skipped' && node.startedAt !== '';
const asStarted = (node: NodeView): NodeView => ({ ...node, statusLabel: 'running', finishedAt: '', error: '' });

export class Progress {
  /** The label each step was last shown with. */
  private readonly shown = new Map<string, string>();
  /** The start time each step had in the attempt before a retry: one that starts anew is told again, even to the same end. */
  private readonly seededStarts = new Map<string, string>();
  private runLabel = '';
  private latest: RunView | undefined;
  private drawnLines = 0;
  private ticker: NodeJS.Timeout | undefined;

  constructor(private readonly mode: ProgressMode, private readonly write: (text: string) => void = (text) => process.stdout.write(text)) {
    // The live view's durations move while nothing changes.
    if (mode === 'live') this.ticker = setInterval(() => this.draw(), 500).unref();
  }

  /** Something else was written below the live view: the next view is drawn after it, not over it. */
  release(): void {
    this.drawnLines = 0;
  }

  /** A retry's steps as the attempt before it left them: only what changes from there is told. */
  seed(run: RunView): void {
    for (const node of run.nodes) {
      this.shown.set(node.step.name, node.statusLabel);
      this.seededStarts.set(node.step.name, node.startedAt);
    }
    this.runLabel = run.statusLabel;
  }

  /** Forgets what the attempt before left of each step `run` shows started anew (it may have ended before it was seen running). */
  private restarted(run: RunView): void {
    if (this.seededStarts.size === 0) return;
    for (const node of run.nodes) {
      const seeded = this.seededStarts.get(node.step.name);
      if (seeded === undefined || node.startedAt === '' || node.startedAt === seeded) continue;
      this.seededStarts.delete(node.step.name);
      this.shown.delete(node.step.name);
    }
  }

  update(run: RunView): void {
    this.restarted(run);
    this.latest = run;
    if (this.mode === 'live') {
      this.draw();
      return;
    }
    if (run.statusLabel !== this.runLabel && run.statusLabel !== 'not_started') {
      this.runLabel = run.statusLabel;
      if (run.statusLabel === 'running' || run.statusLabel === 'queued') this.transition(run, undefined, run.statusLabel);
    }
    for (const node of run.nodes) {
      const before = this.shown.get(node.step.name);
      if (before === node.statusLabel || node.statusLabel === 'not_started') continue;
      if (before === undefined && seenEnded(node)) this.transition(run, asStarted(node), 'running');
      this.shown.set(node.step.name, node.statusLabel);
      this.transition(run, node, node.statusLabel);
    }
  }

  /** The run's last change shown; stops the live view's clock, so that what is written next stays below it. */
  end(run: RunView): void {
    clearInterval(this.ticker);
    this.update(run);
    this.drawnLines = 0;
  }

  /**
   * A step's output, on the stream it was written to; a JSON line with --json. On a terminal it
   * is written above the live view, which is drawn again below it. `prefix`: before the content
   * in text (the step's name, where several steps' output is shown).
   */
  output(run: Pick<RunView, 'name' | 'dagRunId'>, step: string, stream: 'stdout' | 'stderr', content: string, prefix = ''): void {
    if (this.mode === 'json') {
      this.write(`${JSON.stringify({ type: 'output', name: run.name, dagRunId: run.dagRunId, step, stream, content })}\n`);
      return;
    }
    const live = this.mode === 'live' && this.drawnLines > 0;
    if (live) this.write(this.undraw());
    this.drawnLines = 0;
    if (stream === 'stdout') this.write(`${prefix}${content}\n`);
    else process.stderr.write(`${prefix}${content}\n`);
    if (live) this.draw();
  }

  /**
   * Only the starts `run` tells of: a step (or the run) first seen once it had ended is told as
   * started, so that what it wrote can be shown before its end is.
   */
  starts(run: RunView): void {
    // The live view shows every step as it is: drawn before the output that follows, so that it comes first.
    if (this.mode === 'live') {
      if (this.drawnLines === 0 && this.latest === undefined) this.update(run);
      return;
    }
    this.restarted(run);
    this.update({
      ...run,
      // What was told already is told again as it was: nothing is told twice, nothing goes back.
      statusLabel: this.runLabel || (run.startedAt !== '' && FINAL_NODE.has(run.statusLabel) ? 'running' : run.statusLabel),
      finishedAt: '',
      nodes: run.nodes.map((node) => {
        const told = this.shown.get(node.step.name);
        if (told !== undefined) return { ...node, statusLabel: told };
        return seenEnded(node) ? asStarted(node) : node;
      }),
    });
  }

  /**
   * `run` as far as its first `count` steps: the later ones as they were told (not started when
   * they were not), so that a step's end, and the output before it, is told before a later step's
   * start. The live view shows every step as it is.
   */
  through(run: RunView, count: number): RunView {
    if (this.mode === 'live') return run;
    this.restarted(run);
    return {
      ...run,
      nodes: run.nodes.map((node, index) => {
        if (index < count) return node;
        const told = this.shown.get(node.step.name);
        if (told === undefined) return { ...node, statusLabel: 'not_started', startedAt: '', finishedAt: '', error: '' };
        return { ...node, statusLabel: told, finishedAt: FINAL_NODE.has(told) ? node.finishedAt : '' };
      }),
    };
  }

  /** What the run came to: status, duration, failed steps and their errors, where the logs are. */
  /** `notes.stoppedBy`: what stopped the run from here (Ctrl-C, SIGTERM). */
  summary(run: RunView, notes: { stoppedBy?: string } = {}): void {
    const failed = run.nodes.filter((node) => node.statusLabel === 'failed');
    if (this.mode === 'json') {
      this.write(`${JSON.stringify({
        type: 'summary', name: run.name, dagRunId: run.dagRunId, status: run.statusLabel, startedAt: run.startedAt, finishedAt: run.finishedAt,
        durationMs: run.startedAt === '' ? 0 : Date.parse(run.finishedAt) - Date.parse(run.startedAt),
        failedSteps: failed.map((node) => ({ name: node.step.name, error: node.error })), log: run.log, interrupted: notes.stoppedBy !== undefined,
      })}\n`);
      return;
    }
    const lines = [`dag-run ${run.name} ${run.dagRunId}: ${run.statusLabel} in ${between(run.startedAt, run.finishedAt)}${notes.stoppedBy ? ` (stopped by ${notes.stoppedBy})` : ''}`];
    for (const node of failed) lines.push(`  failed step ${node.step.name}: ${withoutStderrTail(node.error) || 'no error text'}`);
    if (run.log) lines.push(`  log: ${run.log}`);
    lines.push(`  details: troupe status ${run.name} --run-id ${run.dagRunId}`);
    this.write(`${lines.join('\n')}\n`);
  }

  private transition(run: RunView, node: NodeView | undefined, label: string): void {
    const at = node ? (FINAL_NODE.has(label) ? node.finishedAt : node.startedAt) : run.startedAt || run.queuedAt;
    if (this.mode === 'json') {
      this.write(`${JSON.stringify(node
        ? { type: 'step', name: run.name, dagRunId: run.dagRunId, step: node.step.name, status: label, at, error: node.error || undefined }
        : { type: 'run', name: run.name, dagRunId: run.dagRunId, status: label, at })}\n`);
      return;
    }
    const clock = time(at || new Date().toISOString()).slice(11);
    if (!node) {
      this.write(`${clock} dag-run ${run.name} ${run.dagRunId} ${label}\n`);
      return;
    }
    const took = FINAL_NODE.has(label) && node.startedAt !== '' ? ` (${between(node.startedAt, node.finishedAt)})` : '';
    const error = label === 'failed' && node.error ? `: ${withoutStderrTail(node.error)}` : '';
    this.write(`${clock} step ${node.step.name} ${label}${took}${error}\n`);
  }

  private draw(): void {
    const run = this.latest;
    if (!run) return;
    const lines = [`${run.name} ${run.dagRunId}  ${run.statusLabel}  ${between(run.startedAt, run.finishedAt)}`];
    const width = Math.max(0, ...run.nodes.map((node) => node.step.name.length));
    for (const node of run.nodes) {
      const took = node.startedAt === '' ? '' : `  ${between(node.startedAt, node.finishedAt)}`;
      const error = node.statusLabel === 'failed' && node.error ? `  ${withoutStderrTail(node.error)}` : '';
      lines.push(`  ${MARK[node.statusLabel] ?? '?'} ${node.step.name.padEnd(width)}  ${node.statusLabel}${took}${error}`);
    }
    const columns = process.stdout.columns || 120;
    const text = lines.map((line) => (line.length > columns ? line.slice(0, columns - 1) : line)).join('\n');
    this.write(`${this.undraw()}${text}\n`);
    this.drawnLines = lines.length;
  }

  /** Back to the view's first line, cleared to the end of the screen ('' with no view drawn). */
  private undraw(): string {
    return this.drawnLines > 0 ? `\x1b[${this.drawnLines}A\r\x1b[J` : '';
  }
}

export function progressMode(json: boolean | undefined): ProgressMode {
  if (json) return 'json';
  return process.stdout.isTTY === true && process.env.TERM !== 'dumb' ? 'live' : 'plain';
}


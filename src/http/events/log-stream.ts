// A step's log as Server-Sent Events: each line as it is written, `id:` the byte offset just after
// it (a reconnecting client resumes there), then `end` once the step has ended and its log was
// read to its end. The step's end is heard from the engine's events; the file is followed by the
// log store (a watch and a slow poll). Never read faster than the client takes it.
import { isFinalRunStatus, isHandlerNodeName, stepNodeOf, nodeStatusLabel, type EngineListener, type LogFollow, type LogLine, type LogStore, type NodeStatus, type RunRecord, type RunStore } from '../../core/index.ts';
import { errorText, log } from '../../logging/index.ts';
import type { HttpResponse, StreamSink } from '../types.ts';
import { RECONNECT_MS, SSE_HEADERS } from './sse.ts';

/** How often a handler's node is looked at: handlers have no step events of their own. */
const HANDLER_CHECK_MS = 1_000;


export interface StepLogTarget {
  /** The run as stored (a sub DAG run's own name and id). */
  name: string;
  dagRunId: string;
  stepName: string;
  /** The log file, from the run record; '' when the step has none. */
  path: string;
  /** The byte to start from. */
  from: number;
  /** Whether a line begun and not ended yet is sent as written so far (`event: partial`). */
  partial?: boolean;
}

export interface StepLogSources {
  runs: RunStore;
  logs: LogStore;
  subscribe(listener: EngineListener): () => void;
  heartbeatMs: number;
}

/** The answer that streams the step's log from `target.from` on. */
export function stepLogStreamResponse(sources: StepLogSources, target: StepLogTarget): HttpResponse {
  return { status: 200, headers: SSE_HEADERS, stream: (sink) => new StepLogStream(sources, target, sink).start() };
}

const HEARTBEAT = ': keepalive\n\n';

/** A line as SSE data. A carriage return would end the field for the client: each part of the line is a data line of its own. */
export function lineFrame(line: LogLine): string {
  return `id: ${line.end}\ndata: ${dataOf(line.text)}\n\n`;
}

/** A line not ended yet, as written so far: no id, since the client resumes from whole lines. */
export function partialFrame(text: string): string {
  return `event: partial\ndata: ${dataOf(text)}\n\n`;
}

function dataOf(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return text.includes('\r') ? text.split('\r').join('\ndata: ') : text;
}

class StepLogStream {
  private follow: LogFollow | undefined;
  private unsubscribe: (() => void) | undefined;
  private timers: NodeJS.Timeout[] = [];
  private finishing = false;
  private closed = false;
  private wrote = false;
  /** The client is behind: nothing more is written until it catches up, not even a heartbeat. */
  private congested = false;

  constructor(private readonly sources: StepLogSources, private readonly target: StepLogTarget, private readonly sink: StreamSink) {}

  start(): void {
    const { sources, target, sink } = this;
    sink.onClosed(() => this.close());
    if (sink.closed) return this.close();
    sink.write(`retry: ${RECONNECT_MS}\n\n`);
    if (target.path !== '') {
      this.follow = sources.logs.follow(target.path, {
        from: target.from,
        lines: (lines) => this.send(lines),
        ended: (nextOffset) => this.end(nextOffset),
        failed: (error) => this.failed(error),
        ...(target.partial ? { open: (text: string) => this.sendPartial(text) } : {}),
      });
      sink.onDrained(() => {
        this.congested = false;
        this.follow?.resume();
      });
    }
    // Subscribed before the first look, so that an end committed in between is heard.
    this.unsubscribe = sources.subscribe((event) => {
      if ('dagRunId' in event && event.dagRunId === target.dagRunId && event.name === target.name) this.check();
    });
    if (isHandlerNodeName(target.stepName)) this.timers.push(setInterval(() => this.check(), HANDLER_CHECK_MS).unref());
    this.timers.push(setInterval(() => {
      if (!this.wrote && !this.congested) sink.write(HEARTBEAT);
      this.wrote = false;
    }, sources.heartbeatMs).unref());
    this.check();
  }

  /** Once the step has ended (or its run, or the run is gone), what is left of its log is read, then `end`. */
  private check(): void {
    if (this.finishing || this.closed) return;
    const record = this.sources.runs.get(this.target.name, this.target.dagRunId);
    const node = record && stepNodeOf(record, this.target.stepName);
    if (record && node && !ended(record, node.status)) return;
    this.finishing = true;
    if (this.follow) this.follow.finish();
    else this.end(this.target.from);
  }

  private send(lines: readonly LogLine[]): boolean {
    if (this.closed) return false;
    this.wrote = true;
    let chunk = '';
    for (const line of lines) chunk += lineFrame(line);
    this.congested = !this.sink.write(chunk);
    return !this.congested;
  }

  /** A client that is behind gets the line whole when it ends, not what it was on the way. */
  private sendPartial(text: string): void {
    if (this.closed || this.congested) return;
    this.wrote = true;
    this.congested = !this.sink.write(partialFrame(text));
  }

  private end(nextOffset: number): void {
    if (this.closed) return;
    const record = this.sources.runs.get(this.target.name, this.target.dagRunId);
    const status = (record && stepNodeOf(record, this.target.stepName)?.status) ?? 0;
    this.sink.write(`event: end\ndata: ${JSON.stringify({ status, statusLabel: nodeStatusLabel(status as NodeStatus), nextOffset })}\n\n`);
    this.close();
    this.sink.end();
  }

  private failed(error: Error): void {
    if (this.closed) return;
    log.warn({ error: errorText(error), dagRunId: this.target.dagRunId, step: this.target.stepName }, 'a step log could not be followed');
    this.sink.write(`event: error\ndata: ${JSON.stringify({ message: 'the step log could not be read' })}\n\n`);
    this.close();
    this.sink.end();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.follow?.close();
    this.unsubscribe?.();
    for (const timer of this.timers) clearInterval(timer);
  }
}

/** A node that will not write again: ended, or its run ended (a step that never started never will). */
function ended(record: RunRecord, status: number): boolean {
  return (status !== 0 && status !== 1) || isFinalRunStatus(record.status);
}

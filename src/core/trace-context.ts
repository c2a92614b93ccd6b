// A run's place in a distributed trace (OpenTelemetry, W3C Trace Context): the ids its spans carry,
// the `traceparent` text a caller or a calling step hands it, and the spans a traced run reports.
// Pure: the tracing folder exports the spans; the run actor only builds them.
import { randomBytes } from 'node:crypto';

/** A span's place in its trace: the W3C `traceparent` fields troupe reads and writes. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A `traceparent` header's fields; undefined when the text is not one (W3C Trace Context: version
 * ff, all-zero ids, or a version-00 header with more fields are invalid, and are ignored as such).
 */
export function parseTraceparent(text: string | undefined): TraceParent | undefined {
  const match = text === undefined ? null : TRACEPARENT.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, sampled: (Number.parseInt(flags!, 16) & 1) === 1 };
}

export function traceparentText(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${parent.sampled ? '01' : '00'}`;
}

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

/** Where a traced run's spans go: its `otel` settings, their variables expanded. */
export interface TraceExport {
  endpoint: string;
  headers: Record<string, string>;
  insecure: boolean;
  /** Bounds each export; 0: the exporter's default (10 s). */
  timeoutMs: number;
  /** Resource attributes, `service.name` among them. */
  resource: Record<string, string>;
}

/** A traced run's trace: its root span's ids, the span above it (a caller's, a calling step's), where to export. */
export interface RunTrace {
  traceId: string;
  /** The run's own span ("DAG: name"): its steps' spans are its children. */
  spanId: string;
  parentSpanId?: string;
  export: TraceExport;
}

export type SpanAttributes = Record<string, string | number | boolean>;

/** Where the runs' spans go (the tracing folder exports them); nothing it does may slow or fail a run. */
export interface SpanSink {
  add(trace: RunTrace, span: RunSpan): void;
  /** Spans sent to their collectors, and spans dropped (a collector down, refusing, or too slow). */
  counts(): SpanCounts;
  close(): Promise<void>;
}

export interface SpanCounts {
  exported: number;
  dropped: number;
}

/** A finished span of a run, with its recorded times (ms since the epoch). */
export interface RunSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  startMs: number;
  endMs: number;
  attributes: SpanAttributes;
  /** Set when the run or step did not succeed: the span's status is an error with this message. */
  error?: string;
}

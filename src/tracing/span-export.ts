// Exports the spans of traced runs: one OTLP exporter per distinct `otel` setting (one process runs
// many DAGs with different collectors), spans sent in batches, one export in flight per collector.
// A collector that is down, slow or refusing never reaches a run: spans wait in a bounded queue,
// what cannot be exported is counted and dropped, and a failure streak is logged once.
import { SpanKind, SpanStatusCode, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { ExportResultCode, hrTimeDuration, millisToHrTime } from '@opentelemetry/core';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { RunSpan, RunTrace, SpanCounts, SpanSink, TraceExport } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import { DEFAULT_EXPORT_TIMEOUT_MS, otlpExporter } from './otlp-exporter.ts';

export interface SpanExportOptions {
  /** Builds a collector's exporter (OTLP by default). */
  exporterFor?: (settings: TraceExport) => SpanExporter;
  /** Spans waiting per collector; more are dropped. */
  maxQueue?: number;
  /** Spans per export. */
  maxBatch?: number;
  /** How long a span may wait for others to fill its batch. */
  delayMs?: number;
}

const SCOPE = { name: 'troupe' };

/** One collector: its exporter, its queue, whether its exports fail. */
interface Collector {
  endpoint: string;
  exporter?: SpanExporter;
  resource: Resource;
  timeoutMs: number;
  queue: ReadableSpan[];
  timer?: NodeJS.Timeout;
  sending?: Promise<void>;
  failing: boolean;
}

export class SpanExports implements SpanSink {
  private readonly collectors = new Map<string, Collector>();
  /** A run's spans share its plan's export settings: found by identity before by text. */
  private readonly byObject = new WeakMap<TraceExport, Collector>();
  private readonly tally: SpanCounts = { exported: 0, dropped: 0 };
  private readonly exporterFor: (settings: TraceExport) => SpanExporter;
  private readonly maxQueue: number;
  private readonly maxBatch: number;
  private readonly delayMs: number;
  private closed = false;

  constructor(options: SpanExportOptions = {}) {
    this.exporterFor = options.exporterFor ?? ((settings) => otlpExporter(settings));
    this.maxQueue = options.maxQueue ?? 4096;
    this.maxBatch = options.maxBatch ?? 512;
    this.delayMs = options.delayMs ?? 200;
  }

  counts(): SpanCounts {
    return { ...this.tally };
  }

  add(trace: RunTrace, span: RunSpan): void {
    const collector = this.collectorOf(trace.export);
    if (this.closed || !collector.exporter || collector.queue.length >= this.maxQueue) {
      this.dropped(collector, 1, this.closed ? 'the server is stopping' : collector.exporter ? 'too many spans wait for the collector' : 'its exporter could not be made');
      return;
    }
    collector.queue.push(readableSpan(trace, span, collector.resource));
    if (collector.queue.length >= this.maxBatch) this.send(collector);
    else collector.timer ??= setTimeout(() => this.send(collector), this.delayMs).unref();
  }

  /** Sends what waits, within `withinMs`, then closes the exporters; spans added later are dropped. */
  async close(withinMs = 2_000): Promise<void> {
    this.closed = true;
    const flushing = [...this.collectors.values()].map(async (collector) => {
      while (collector.exporter && (collector.queue.length > 0 || collector.sending)) {
        if (!collector.sending) this.send(collector);
        await collector.sending;
      }
      await collector.exporter?.shutdown().catch(() => undefined);
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs).unref()));
    await Promise.race([Promise.all(flushing), late]);
    clearTimeout(timer);
    for (const collector of this.collectors.values()) {
      if (collector.queue.length > 0) this.dropped(collector, collector.queue.splice(0).length, 'the server stopped before they were sent');
    }
  }

  private collectorOf(settings: TraceExport): Collector {
    const known = this.byObject.get(settings);
    if (known) return known;
    const key = JSON.stringify([settings.endpoint, settings.insecure, settings.timeoutMs, settings.headers, settings.resource]);
    let collector = this.collectors.get(key);
    if (!collector) {
      collector = {
        endpoint: settings.endpoint, resource: resourceFromAttributes(settings.resource), queue: [], failing: false,
        timeoutMs: settings.timeoutMs > 0 ? settings.timeoutMs : DEFAULT_EXPORT_TIMEOUT_MS,
      };
      try {
        collector.exporter = this.exporterFor(settings);
      } catch (error) {
        log.warn({ endpoint: settings.endpoint, error: errorText(error) }, 'traces cannot be exported to this endpoint: its spans are dropped');
      }
      this.collectors.set(key, collector);
    }
    this.byObject.set(settings, collector);
    return collector;
  }

  /** One batch to the collector, unless one is in flight; the next follows when it settles. */
  private send(collector: Collector): void {
    clearTimeout(collector.timer);
    collector.timer = undefined;
    if (collector.sending || collector.queue.length === 0 || !collector.exporter) return;
    const batch = collector.queue.splice(0, this.maxBatch);
    collector.sending = this.exportBatch(collector, batch).then((error) => {
      collector.sending = undefined;
      if (error === undefined) {
        this.tally.exported += batch.length;
        if (collector.failing) log.info({ endpoint: collector.endpoint }, 'traces are exported again');
        collector.failing = false;
      } else {
        this.dropped(collector, batch.length, error);
      }
      if (collector.queue.length >= this.maxBatch || (this.closed && collector.queue.length > 0)) this.send(collector);
      else if (collector.queue.length > 0) collector.timer ??= setTimeout(() => this.send(collector), this.delayMs).unref();
    });
  }

  /** The export's error, or undefined once the collector took the batch. Bounded: a silent collector fails it. */
  private exportBatch(collector: Collector, batch: ReadableSpan[]): Promise<string | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(`no answer within ${collector.timeoutMs} ms`), collector.timeoutMs + 1_000).unref();
      try {
        collector.exporter!.export(batch, (result) => {
          clearTimeout(timer);
          resolve(result.code === ExportResultCode.SUCCESS ? undefined : errorText(result.error ?? 'the export failed'));
        });
      } catch (error) {
        clearTimeout(timer);
        resolve(errorText(error));
      }
    });
  }

  /** Counts spans that will never reach the collector; the first failure of a streak is logged. */
  private dropped(collector: Collector, count: number, reason: string): void {
    this.tally.dropped += count;
    if (collector.failing) return;
    collector.failing = true;
    log.warn({ endpoint: collector.endpoint, error: reason, spans: count }, 'traces could not be exported: their spans are dropped (logged once until an export succeeds again)');
  }
}

/** A run's span as the exporters read it: its recorded times, its trace's ids. */
function readableSpan(trace: RunTrace, span: RunSpan, resource: Resource): ReadableSpan {
  const context: SpanContext = { traceId: trace.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
  const startTime = millisToHrTime(span.startMs);
  const endTime = millisToHrTime(Math.max(span.endMs, span.startMs));
  return {
    name: span.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    ...(span.parentSpanId ? { parentSpanContext: { traceId: trace.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED } } : {}),
    startTime,
    endTime,
    status: span.error !== undefined ? { code: SpanStatusCode.ERROR, message: span.error } : { code: SpanStatusCode.UNSET },
    attributes: span.attributes,
    links: [],
    events: [],
    duration: hrTimeDuration(startTime, endTime),
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

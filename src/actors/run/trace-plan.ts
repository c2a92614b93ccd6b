// Whether a run is traced, and where its spans go: its DAG's `otel` (or the server's default), its
// variables expanded, and its place in a trace (a caller's `traceparent`, or its calling step's).
import { newSpanId, newTraceId, ownValue, parseTraceparent, type OtelSpec, type RunTrace, type TraceExport } from '../../core/index.ts';
import { expandVariables, goDurationMs } from '../../definition/index.ts';

/** What decides a run's trace: its DAG's `otel`, its calling step's trace, the server's default, a caller's traceparent. */
export interface TraceChoice {
  /** The DAG's own `otel`: when written, it decides (`enabled: false` traces nothing). */
  own?: OtelSpec;
  /** A sub DAG run's calling step: its span and where its run's spans go. */
  caller?: CallerTrace;
  /** The server's default `otel`, for DAGs without one. */
  fallback?: OtelSpec;
  /** A start request's `traceparent` header: the run's span becomes a child of the caller's. */
  traceParent?: string;
}

/** The trace a calling step hands its sub DAG runs. */
export interface CallerTrace {
  traceParent: string;
  export: TraceExport;
}

/**
 * The run's trace, when it is traced: fresh ids, in the trace of the span above it when there is
 * one. A sub DAG run without an `otel` of its own joins its caller's trace, exported where the
 * caller's spans go. `env`: what the settings' references read (`${DAG_NAME}`, the run's variables).
 */
export function runTrace(choice: TraceChoice, env: Record<string, string>): RunTrace | undefined {
  if (choice.own === undefined && choice.caller) return traceUnder(choice.caller.traceParent, choice.caller.export);
  const otel = choice.own ?? choice.fallback;
  if (!otel?.enabled || otel.endpoint === undefined) return undefined;
  const scope = { get: (key: string) => ownValue(env, key) };
  const expand = (text: string) => expandVariables(text, scope);
  const expandAll = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([key, value]) => [key, expand(value)]));
  return traceUnder(choice.caller?.traceParent ?? choice.traceParent, {
    endpoint: expand(otel.endpoint),
    headers: expandAll(otel.headers),
    insecure: otel.insecure,
    timeoutMs: goDurationMs(otel.timeout ?? '') ?? 0,
    resource: { 'service.name': 'troupe', ...expandAll(otel.resource) },
  });
}

function traceUnder(traceParent: string | undefined, exportTo: TraceExport): RunTrace {
  const parent = parseTraceparent(traceParent);
  return { traceId: parent?.traceId ?? newTraceId(), spanId: newSpanId(), ...(parent ? { parentSpanId: parent.spanId } : {}), export: exportTo };
}

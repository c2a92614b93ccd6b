// The OTLP exporter of a run's `otel` settings, chosen as Dagu chooses it: an endpoint ending in
// `/v1/traces` is OTLP over HTTP (protobuf, or JSON when OTEL_EXPORTER_OTLP_TRACES_PROTOCOL says
// http/json), any other OTLP over gRPC. `insecure` drops TLS.
import { credentials, Metadata } from '@grpc/grpc-js';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { TraceExport } from '../core/index.ts';

/** The exporter's own bound on an export when `timeout` is not set, as OpenTelemetry's. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 10_000;

/** Whether spans to this endpoint go over HTTP (else gRPC). */
export function isHttpEndpoint(endpoint: string): boolean {
  return endpoint.endsWith('/v1/traces');
}

/** The endpoint as a URL: one without a scheme gets http:// when insecure, https:// else. */
export function endpointUrl(endpoint: string, insecure: boolean): string {
  const bare = endpoint.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  if (insecure) return `http://${bare}`;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `https://${bare}`;
}

function httpProtocol(env: Record<string, string | undefined>): 'http/json' | 'http/protobuf' {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  return protocol?.trim() === 'http/json' ? 'http/json' : 'http/protobuf';
}

export function otlpExporter(settings: TraceExport, env: Record<string, string | undefined> = process.env): SpanExporter {
  const timeoutMillis = settings.timeoutMs > 0 ? settings.timeoutMs : DEFAULT_EXPORT_TIMEOUT_MS;
  const url = endpointUrl(settings.endpoint, settings.insecure);
  if (isHttpEndpoint(settings.endpoint)) {
    const config = { url, headers: { ...settings.headers }, timeoutMillis, concurrencyLimit: 4 };
    return httpProtocol(env) === 'http/json' ? new JsonExporter(config) : new ProtoExporter(config);
  }
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(settings.headers)) metadata.set(key.toLowerCase(), value);
  return new GrpcExporter({
    url, metadata, timeoutMillis, concurrencyLimit: 4,
    credentials: url.startsWith('http://') ? credentials.createInsecure() : credentials.createSsl(),
  });
}

export { SpanExports, type SpanExportOptions } from './span-export.ts';
export { otlpExporter, isHttpEndpoint, endpointUrl } from './otlp-exporter.ts';

// OTLP trace receivers for the tests, on loopback: one over HTTP (protobuf or JSON bodies), one over
// gRPC. Each decodes what arrives into plain spans and keeps the request headers (gRPC metadata).
// No collector exists on npm or in Debian: these stand in for one, decoding with the OTLP schema's
// trace messages written out below (protobufjs reads them).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as GrpcServer, ServerCredentials, type Metadata, type ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`;

const root = protobuf.parse(SCHEMA, { keepCase: false }).root;
const RequestType = root.lookupType('otlp.ExportTraceServiceRequest');
const ResponseType = root.lookupType('otlp.ExportTraceServiceResponse');

export type Value = string | number | boolean;

/** A span as received, ids in hex, times in ms. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, Value>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  resource: Record<string, Value>;
}

export interface ReceivedExport {
  headers: Record<string, string>;
  /** `protobuf` or `json` (HTTP), `grpc`. */
  encoding: 'protobuf' | 'json' | 'grpc';
  spans: ReceivedSpan[];
}

export interface OtlpReceiver {
  /** The endpoint a DAG's `otel` names. */
  endpoint: string;
  exports: ReceivedExport[];
  spans(): ReceivedSpan[];
  /** Until `stall(false)`, requests are held unanswered. */
  stall(on: boolean): void;
  close(): Promise<void>;
}

const hex = (bytes: unknown): string => (bytes instanceof Uint8Array ? Buffer.from(bytes).toString('hex') : typeof bytes === 'string' ? bytes : '');

/** JSON's ids are hex already; protobuf's come as bytes. Times are nanoseconds as text or Long. */
function attributesOf(list: unknown): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const entry of (list ?? []) as Array<{ key: string; value?: Record<string, unknown> }>) {
    const value = entry.value ?? {};
    const found = value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined);
    if (found !== undefined) out[entry.key] = found as Value;
  }
  return out;
}

function spansOf(request: Record<string, unknown>): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of (request.resourceSpans ?? []) as Array<Record<string, any>>) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of (resourceSpans.scopeSpans ?? []) as Array<Record<string, any>>) {
      for (const span of (scopeSpans.spans ?? []) as Array<Record<string, any>>) {
        spans.push({
          traceId: hex(span.traceId), spanId: hex(span.spanId), parentSpanId: hex(span.parentSpanId), name: span.name,
          startMs: Number(BigInt(String(span.startTimeUnixNano)) / 1_000_000n), endMs: Number(BigInt(String(span.endTimeUnixNano)) / 1_000_000n),
          attributes: attributesOf(span.attributes), statusCode: Number(span.status?.code ?? 0), statusMessage: span.status?.message ?? '', resource,
        });
      }
    }
  }
  return spans;
}

function decodeProtobuf(body: Uint8Array): Record<string, unknown> {
  return RequestType.toObject(RequestType.decode(body), { longs: String, defaults: false }) as Record<string, unknown>;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value ?? '']));
}

/** Holds requests while stalled; `hold` answers them once released (or never, if the receiver closes first). */
function staller() {
  let stalled = false;
  let waiting: Array<() => void> = [];
  return {
    set(on: boolean) {
      stalled = on;
      if (!on) for (const release of waiting.splice(0)) release();
    },
    hold(answer: () => void) {
      if (stalled) waiting.push(answer);
      else answer();
    },
    drop() {
      waiting = [];
    },
  };
}

export async function startHttpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const stalls = staller();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = String(request.headers['content-type']).includes('json');
      try {
        const decoded = json ? JSON.parse(body.toString('utf8')) as Record<string, unknown> : decodeProtobuf(body);
        exports.push({ headers: flatHeaders(request.headers), encoding: json ? 'json' : 'protobuf', spans: spansOf(decoded) });
      } catch (error) {
        response.writeHead(400).end(String(error));
        return;
      }
      stalls.hold(() => {
        if (json) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(ResponseType.encode(ResponseType.create({})).finish()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    exports,
    spans: () => exports.flatMap((received) => received.spans),
    stall: (on) => stalls.set(on),
    close: async () => {
      stalls.drop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startGrpcReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const stalls = staller();
  const service: ServiceDefinition = {
    Export: {
      path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: Uint8Array) => Buffer.from(value),
      requestDeserialize: (bytes: Buffer) => decodeProtobuf(bytes),
      responseSerialize: () => Buffer.from(ResponseType.encode(ResponseType.create({})).finish()),
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
  const server = new GrpcServer();
  server.addService(service, {
    Export: (call: { request: Record<string, unknown>; metadata: Metadata }, callback: (error: { code: number } | null, value?: unknown) => void) => {
      const headers = Object.fromEntries(Object.entries(call.metadata.getMap()).map(([key, value]) => [key, String(value)]));
      exports.push({ headers, encoding: 'grpc', spans: spansOf(call.request) });
      stalls.hold(() => callback(null, {}));
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  return {
    endpoint: `127.0.0.1:${port}`,
    exports,
    spans: () => exports.flatMap((received) => received.spans),
    stall: (on) => stalls.set(on),
    close: async () => {
      stalls.drop();
      server.forceShutdown();
    },
  };
}


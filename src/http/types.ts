// The small request/response interface every handler is written against, whichever server carries it.
import { parseTraceparent, type Clock, type DagStore, type IdempotencyStore, type LogStore, type RunStore, type WorkerView } from '../core/index.ts';
import type { Definitions } from '../catalog/index.ts';
import type { Engine } from '../engine/index.ts';
import type { CronScheduler, RetentionSweeper } from '../scheduler/index.ts';
import type { ResourceHistory, TroupeMetrics } from '../ops/index.ts';
import type { Auth, Identity, OidcSignIn } from '../auth/index.ts';
import type { EventHub } from './events/hub.ts';

/** A request as a carrier hands it over, before routing. */
export interface RawRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** The client's address (the connection's peer), for the sign-in limits per address. */
  remoteAddress?: string;
}

/** The API as one function from a raw request to a response (app.ts createApi). */
export type Api = (request: RawRequest) => Promise<HttpResponse>;

/** Where a request with `remoteNode` goes; undefined when this server answers it (remote-nodes.ts). */
export interface RemoteForwarder {
  forward(raw: RawRequest, apiPath: string): Promise<HttpResponse | undefined>;
}

export interface HttpRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string>;
  /** Parsed JSON body; undefined when there is none. */
  body: unknown;
  /** Who sent it, as authentication found (kind `none` on a public route or with authentication off). */
  identity: Identity;
  /** The client's address, as the carrier saw the connection. */
  remoteAddress?: string;
}

export interface HttpResponse {
  status: number;
  headers?: Record<string, string>;
  /** JSON-serialised unless it is a string (sent as text/plain), a Buffer (sent as it is) or undefined. */
  body?: unknown;
  /**
   * A body written as it comes (an event stream): the carrier sends the status and headers, then
   * hands the connection's sink to this. Without a Content-Length; the connection stays open until
   * either side ends it.
   */
  stream?: (sink: StreamSink) => void;
}

/** An open response a stream writes to, whichever carrier holds the connection. */
export interface StreamSink {
  /**
   * Sends a chunk. False once the client is behind: the carrier holds what it could not send, and
   * the writer waits for `onDrained` before writing more.
   */
  write(chunk: string): boolean;
  /** The client caught up after a write answered false. */
  onDrained(listener: () => void): void;
  /** The connection closed (the client left, or the server stops); nothing more may be written. */
  onClosed(listener: () => void): void;
  /** Ends the response (and with it the connection's stream). */
  end(): void;
  readonly closed: boolean;
}

/**
 * What the run-details thread answers for a run: the document of the keys asked for (moved, not
 * copied), where the first key's details are in it, and the version it read (RunLocation).
 */
export type StoredDetailsAnswer = { kind: 'ok'; document: Uint8Array; details: { start: number; end: number }; version: Uint8Array } | { kind: 'absent' };

/** Reads a stored run's details document on the run-details thread; rejects when the thread could not answer. */
export type ReadStoredDetails = (name: string, dagRunId: string, keys: readonly string[]) => Promise<StoredDetailsAnswer>;

export interface ApiDeps {
  engine: Engine;
  /** The stored DAGs' definitions: parsed once per change, listed, checked before they are stored. */
  catalog: Definitions;
  runs: RunStore;
  /** The details of a large run the store does not hold in memory, read on the run-details thread (stored-details.ts); without it, on the main thread. */
  readStoredDetails?: ReadStoredDetails;
  dags: DagStore;
  logs: LogStore;
  version: string;
  startedAtMs: number;
  /** Removes old history: the hourly sweep, and `POST /dag-runs/cleanup`. */
  retention: Pick<RetentionSweeper, 'cleanup'>;
  /** Runs DAGs on their schedules: each DAG's next run and missed ticks; told of changes made through the API. */
  cron: CronScheduler;
  /** The time DAGs' next runs are computed from, and idempotent answers are stamped with. */
  clock: Clock;
  /** The answers of idempotent submits (Idempotency-Key), kept for a day per caller. */
  idempotency: IdempotencyStore;
  /** `GET /metrics`; every request's duration is observed into it. */
  metrics: TroupeMetrics;
  /** `GET /services/resources/history`. */
  resources: ResourceHistory;
  /** Where a request with `remoteNode` goes (config.yaml `remoteNodes`). */
  remoteNodes: RemoteForwarder;
  /** Origins whose browsers may call the API (`cors.allowOrigins`; `*`: any); none by default. */
  corsOrigins: readonly string[];
  /** Who may do what (docs/auth.md); without it every request is served, as with auth mode none. */
  auth?: Auth;
  /** The event stream's subscriptions (`GET /events`, `/events/ws`). */
  eventHub: EventHub;
  /** Sign-in with an OIDC provider (config.yaml `auth.oidc`); the OIDC routes answer 404 without it. */
  oidc?: OidcSignIn;
  /** Whether this server serves HTTPS itself (config.yaml `tls`): its cookies are then Secure. */
  servesTls?: boolean;
  /** Distributed dispatch (config.yaml `distributed.redis`): the workers as Redis has them now; throws when it cannot be asked. */
  workers?: () => Promise<WorkerView[]>;
  /** The dashboard's files, served at `/` (ui-files.ts); none with `--no-ui`. */
  ui?: { answer(path: string, headers: Record<string, string>): HttpResponse };
}

export type Handler = (request: HttpRequest, deps: ApiDeps) => Promise<HttpResponse> | HttpResponse;

export const MAX_BODY_BYTES = 1024 * 1024;

export const json = (body: unknown, status = 200): HttpResponse => ({ status, body });
export const empty = (status = 200): HttpResponse => ({ status });

/**
 * A start request's `traceparent` header (W3C Trace Context), when it holds a valid one: a traced
 * run's span becomes a child of the caller's. An invalid header is ignored, as the standard asks.
 */
export function callerTrace(request: Pick<HttpRequest, 'headers'>): { traceParent?: string } {
  const header = request.headers.traceparent;
  return header !== undefined && parseTraceparent(header) ? { traceParent: header.trim().toLowerCase() } : {};
}

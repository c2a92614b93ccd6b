// The small request/response interface every handler is written against, whichever server carries it.
import type { Clock, DagStore, LogStore, RunStore } from '../core/index.ts';
import type { CronScheduler, Engine } from '../actors/index.ts';
import type { ResourceHistory, TroupeMetrics } from '../ops/index.ts';
import type { Auth, Identity, OidcSignIn } from '../auth/index.ts';
import type { RemoteNodes } from './remote-nodes.ts';

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
}

export interface ApiDeps {
  engine: Engine;
  runs: RunStore;
  dags: DagStore;
  logs: LogStore;
  version: string;
  startedAtMs: number;
  /** Runs DAGs on their schedules: each DAG's next run and missed ticks; told of changes made through the API. */
  cron: CronScheduler;
  /** The time DAGs' next runs are computed from. */
  clock: Clock;
  /** `GET /metrics`; every request's duration is observed into it. */
  metrics: TroupeMetrics;
  /** `GET /services/resources/history`. */
  resources: ResourceHistory;
  /** Where a request with `remoteNode` goes (config.yaml `remoteNodes`). */
  remoteNodes: RemoteNodes;
  /** Origins whose browsers may call the API (`cors.allowOrigins`; `*`: any); none by default. */
  corsOrigins?: readonly string[];
  /** Who may do what (docs/auth.md); without it every request is served, as with auth mode none. */
  auth?: Auth;
  /** Sign-in with an OIDC provider (config.yaml `auth.oidc`); the OIDC routes answer 404 without it. */
  oidc?: OidcSignIn;
}

export type Handler = (request: HttpRequest, deps: ApiDeps) => Promise<HttpResponse> | HttpResponse;

export const MAX_BODY_BYTES = 1024 * 1024;

export const json = (body: unknown, status = 200): HttpResponse => ({ status, body });
export const empty = (status = 200): HttpResponse => ({ status });

// The API as one function from a raw request to a response: routing, body parsing, error documents.
import { AppError, markStage, stagesWatched } from '../core/index.ts';
import { log } from '../logging/index.ts';
import { compressLarge } from './compressed-answers.ts';
import { Cors } from './cors.ts';
import { refuseCookieForm, refuseCrossSite, SAFE_METHODS } from './cross-site.ts';
import { challengeForScripts, errorResponse } from './errors.ts';
import { guardSocket, guardStream } from './stream-access.ts';
import type { Auth, Identity } from '../auth/index.ts';
import { canonicalRemotePath, namesRemoteNode } from './remote-path.ts';
import { Router, type Match } from './router.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { authRoutes } from './routes/auth.ts';
import { dagRunRoutes } from './routes/dag-runs.ts';
import { dagRoutes } from './routes/dags.ts';
import { EVENTS_SOCKET_PATH, eventRoutes } from './routes/events.ts';
import { startSyncRoutes } from './routes/start-sync.ts';
import { EventSocketSession, type SocketAcceptor } from './events/websocket.ts';
import { logRoutes } from './routes/logs.ts';
import { logStreamRoutes } from './routes/log-stream.ts';
import { openApiRoutes } from './routes/openapi.ts';
import { oidcRoutes } from './routes/oidc.ts';
import { opsRoutes } from './routes/ops.ts';
import { queueRoutes } from './routes/queues.ts';
import { systemRoutes } from './routes/system.ts';
import { userRoutes } from './routes/users.ts';
import { workerRoutes } from './routes/workers.ts';
import type { Api, ApiDeps, HttpResponse, RawRequest } from './types.ts';

export const API_PREFIX = '/api/v2';


/** Every route of the API. */
export function apiRouter(): Router {
  const router = new Router();
  systemRoutes(router);
  workerRoutes(router);
  dagRoutes(router);
  dagRunRoutes(router);
  logRoutes(router);
  logStreamRoutes(router);
  eventRoutes(router);
  startSyncRoutes(router);
  queueRoutes(router);
  opsRoutes(router);
  openApiRoutes(router);
  authRoutes(router);
  oidcRoutes(router);
  userRoutes(router);
  apiKeyRoutes(router);
  return router;
}

/** The API, and its entry for the event stream's WebSocket upgrades (the carriers' part is moving bytes). */
export type ServedApi = Api & { sockets: SocketAcceptor };

export function createApi(deps: ApiDeps): ServedApi {
  const router = apiRouter();
  const siteOptions = { allowOrigins: deps.corsOrigins, ownOrigins: ownOrigins(deps) };
  /** `seen.route`: the matched route's template, never the path, so the request metrics stay as few as the routes. */
  const serve = async (raw: RawRequest, seen: { route: string }): Promise<HttpResponse> => {
    try {
      if (!raw.path.startsWith(`${API_PREFIX}/`)) {
        // Everything outside the API is the dashboard's, when it is served (files and pages alike are public: the sign-in page is one).
        if (deps.ui && (raw.method === 'GET' || raw.method === 'HEAD') && raw.path !== API_PREFIX) {
          seen.route = 'ui';
          return deps.ui.answer(raw.path, raw.headers);
        }
        throw new AppError('not_found', `no route for ${raw.path}`);
      }
      // A path bound for a remote node is made canonical before anything reads it: the route
      // authorized here is then the route the node serves.
      const sent = raw.path.slice(API_PREFIX.length);
      const apiPath = namesRemoteNode(raw.query) ? canonicalRemotePath(sent) : sent;
      // A 405 (or a malformed segment) is answered after authentication and forwarding: a client
      // without credentials learns nothing of the routes, and a remote may serve the method.
      let match: Match | undefined;
      let unmatched: unknown;
      try {
        match = router.match(raw.method, apiPath);
      } catch (error) {
        unmatched = error;
      }
      // Before authentication, whose answers would tell a page of another site whom the browser signs in as.
      if (!SAFE_METHODS.has(raw.method) || match?.writes) refuseCrossSite(raw, siteOptions);
      // Before forwarding: a request reaches a remote node through this server only with
      // credentials this server accepts, and a role that may do it here.
      const identity = await admit(deps.auth, raw, apiPath, match);
      const forwarded = await deps.remoteNodes.forward(raw, apiPath);
      if (forwarded) {
        seen.route = 'remoteNode';
        return forwarded.stream && identity !== OPEN ? guardStream(forwarded, () => admit(deps.auth, raw, apiPath, match), deps.eventHub.limits.heartbeatMs) : forwarded;
      }
      if (unmatched) throw unmatched;
      if (!match) throw new AppError('not_found', `no route for ${raw.method} ${raw.path}`);
      seen.route = match.pattern;
      if (!SAFE_METHODS.has(raw.method)) refuseCookieForm(raw);
      const response = await match.handler({
        method: raw.method,
        path: raw.path,
        params: match.params,
        query: new URLSearchParams(raw.query),
        headers: raw.headers,
        body: parseJson(raw.body),
        identity,
        ...(raw.remoteAddress ? { remoteAddress: raw.remoteAddress } : {}),
      }, deps);
      // A stream outlives the check of its credentials: it is checked again while open.
      if (!response.stream || identity === OPEN) return response;
      return guardStream(response, () => admit(deps.auth, raw, apiPath, match), deps.eventHub.limits.heartbeatMs);
    } catch (error) {
      return errorResponse(error);
    }
  };
  const cors = new Cors({ allowOrigins: deps.corsOrigins });
  const methodsAt = (path: string): string[] => (path.startsWith(`${API_PREFIX}/`) ? router.methodsAt(path.slice(API_PREFIX.length)) : []);
  const api: Api = async (raw) => {
    const started = performance.now();
    markStage('request.received', raw.method);
    const seen = { route: 'unmatched' };
    const preflight = cors.enabled ? cors.preflight(raw, methodsAt) : undefined;
    if (preflight) seen.route = 'preflight';
    const answered = preflight ?? await compressLarge(raw.headers, challengeForScripts(raw.headers, await serve(raw, seen)));
    const response = cors.enabled ? cors.decorate(raw, answered) : answered;
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.observeRequest(raw.method, seen.route, response.status, seconds);
    // At debug only: a line per request (health checks included) would drown an info log.
    if (log.isLevelEnabled('debug')) log.debug({ method: raw.method, route: seen.route, status: response.status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    if (stagesWatched()) markStage('request.answered', `${raw.method} ${seen.route}`);
    return response;
  };
  const sockets: SocketAcceptor = {
    path: `${API_PREFIX}${EVENTS_SOCKET_PATH}`,
    // A subscription writes at most a page of catch-up, or its whole backlog once drained, past what is already held.
    maxBufferedBytes: 2 * deps.eventHub.limits.backlogBytes + 16 * 1024 * 1024,
    acceptSocket: async (raw) => {
      try {
        const match = router.match('GET', EVENTS_SOCKET_PATH);
        handshakeProblem(raw.headers);
        if (namesRemoteNode(raw.query)) throw new AppError('bad_request', 'the event stream over WebSocket is this server\'s own: connect to the remote node itself');
        // A page of another site may open a WebSocket with the browser's credentials and read what
        // comes back (the same-origin policy does not cover WebSockets): refused as a write is, a
        // token (header or `token`) excepted.
        refuseCrossSite({ ...raw, headers: withQueryToken(raw) }, siteOptions);
        const identity = await admit(deps.auth, raw, EVENTS_SOCKET_PATH, match);
        const session = new EventSocketSession(deps.eventHub);
        if (identity === OPEN) return { session };
        return { session: guardSocket(session, () => admit(deps.auth, raw, EVENTS_SOCKET_PATH, match), deps.eventHub.limits.heartbeatMs) };
      } catch (error) {
        return { refused: errorResponse(error) };
      }
    },
  };
  return Object.assign(api, { sockets });
}

const OPEN: Identity = { kind: 'none', username: 'anonymous', role: 'admin' };

/**
 * Who the request is from, once it may go on: public routes and paths are served to anyone;
 * others need credentials `auth` accepts (401) and a role that holds the route's permission (403).
 * A path this build does not serve (only a remote node might) needs `read` to read, `write` else.
 */
async function admit(auth: Auth | undefined, raw: RawRequest, apiPath: string, match: Match | undefined): Promise<Identity> {
  if (!auth || match?.public || auth.isPublicPath(apiPath)) return OPEN;
  const reads = raw.method === 'GET' || raw.method === 'HEAD';
  const permission = match?.permission ?? (reads ? 'read' : 'write');
  // Authentication off: the permission switches still apply; no credential is read.
  const identity = auth.enabled ? await auth.authenticate(match?.tokenInQuery ? withQueryToken(raw) : raw.headers, raw.remoteAddress) : OPEN;
  auth.authorize(identity, permission);
  return identity;
}

/** A WebSocket handshake a carrier would refuse, refused first with the error document. */
function handshakeProblem(headers: Record<string, string>): void {
  if (!/^[+/0-9A-Za-z]{22}==$/.test(headers['sec-websocket-key'] ?? '')) throw new AppError('bad_request', 'a WebSocket handshake needs a Sec-WebSocket-Key (16 bytes in base64)');
  if (headers['sec-websocket-version'] !== '13') throw new AppError('bad_request', 'only WebSocket version 13 is spoken (Sec-WebSocket-Version: 13)');
}

/** The headers, with a `token` query parameter as the Bearer token when no Authorization header is sent. */
function withQueryToken(raw: RawRequest): Record<string, string> {
  if (raw.headers.authorization !== undefined) return raw.headers;
  const token = new URLSearchParams(raw.query).get('token');
  return token ? { ...raw.headers, authorization: `Bearer ${token}` } : raw.headers;
}

/** The OIDC clientUrl is where browsers reach the server, whatever Host a proxy in front sends on. */
function ownOrigins(deps: ApiDeps): string[] {
  return deps.oidc ? [new URL(deps.oidc.settings.clientUrl).origin] : [];
}

function parseJson(body: Buffer | undefined): unknown {
  if (!body || body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('bad_request', 'request body is not valid JSON');
  }
}

/** The bytes and headers of a response, shared by both carriers. */
export function encodeResponse(response: HttpResponse): { status: number; headers: Record<string, string>; body: string | Buffer | undefined } {
  const headers: Record<string, string> = { ...response.headers };
  if (response.body === undefined) return { status: response.status, headers, body: undefined };
  // Bytes are sent as they are, under the content-type the handler set.
  if (Buffer.isBuffer(response.body)) return { status: response.status, headers, body: response.body };
  if (typeof response.body === 'string') {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    return { status: response.status, headers, body: response.body };
  }
  headers['content-type'] = 'application/json';
  return { status: response.status, headers, body: JSON.stringify(response.body) };
}

/** The Content-Length of an encoded body. */
export function bodyLength(body: string | Buffer | undefined): number {
  return body === undefined ? 0 : Buffer.byteLength(body);
}

/** Statuses that never carry a body nor a Content-Length (RFC 9110 6.4.1). */
export function hasNoBody(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

export const tooLarge: HttpResponse = errorResponse(new AppError('payload_too_large', 'request body exceeds 1 MiB'));

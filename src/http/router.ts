// Path-pattern routing over the API's resources. Literal segments win over parameters.
import { AppError } from '../core/index.ts';
import type { Permission } from '../auth/index.ts';
import type { RouteDoc } from './route-doc.ts';
import { idempotent } from './idempotency.ts';
import type { Handler } from './types.ts';

export interface RouteOptions {
  /**
   * Served without authentication whatever the auth mode: the metrics (docs/api.md). Auth
   * checks `Match.public` and must keep honouring it.
   */
  public?: boolean;
  /**
   * What a caller's role must permit (docs/auth.md, Roles). Every route that is not public
   * declares it; one that does not is taken as needing `admin`.
   */
  permission?: Permission;
  /**
   * A GET that changes something (dequeue, a GET in Dagu's API): refused from another site as the
   * other methods are (cross-site.ts).
   */
  writes?: boolean;
  /**
   * A `token` query parameter is taken as a Bearer token when no Authorization header is sent:
   * a browser's EventSource cannot send headers. It is never logged.
   */
  tokenInQuery?: boolean;
  /**
   * Honours the Idempotency-Key header (idempotency.ts): a submit that starts something acts once
   * per caller and key.
   */
  idempotent?: boolean;
}

interface Route extends RouteOptions {
  method: string;
  /** As registered (`/dag-runs/:name/:dagRunId`): what metrics label a request with. */
  pattern: string;
  segments: string[];
  handler: Handler;
  doc?: RouteDoc;
}

/** A route as the OpenAPI document lists it. */
export interface RouteEntry {
  method: string;
  /** The pattern as it was added (`/dags/:fileName`). */
  pattern: string;
  public: boolean;
  /** As declared: undefined when the route declares none. */
  permission?: Permission;
  writes: boolean;
  idempotent: boolean;
  doc?: RouteDoc;
}

export interface Match {
  handler: Handler;
  params: Record<string, string>;
  pattern: string;
  public: boolean;
  permission: Permission;
  writes: boolean;
  tokenInQuery: boolean;
}

export class Router {
  private readonly routes: Route[] = [];

  /**
   * `options` with a RouteDoc (an `operationId`) describe the route in the OpenAPI document; a route
   * without one fails test/openapi.test.ts.
   */
  add(method: string, pattern: string, handler: Handler, options: RouteOptions | (RouteOptions & RouteDoc) = {}): this {
    const served = options.idempotent ? idempotent(method, pattern, handler) : handler;
    const route: Route = { method, pattern, segments: pattern.split('/').filter(Boolean), handler: served };
    if (options.idempotent) route.idempotent = true;
    if (options.public) route.public = true;
    if (options.permission) route.permission = options.permission;
    if (options.writes) route.writes = true;
    if (options.tokenInQuery) route.tokenInQuery = true;
    if ('operationId' in options) route.doc = options;
    this.routes.push(route);
    return this;
  }

  entries(): RouteEntry[] {
    return this.routes.map((route) => ({
      method: route.method, pattern: route.pattern, public: route.public === true, writes: route.writes === true, idempotent: route.idempotent === true,
      ...(route.permission ? { permission: route.permission } : {}), ...(route.doc ? { doc: route.doc } : {}),
    }));
  }

  /**
   * undefined when nothing matches the path; a 405 error when the path matches another method.
   * HEAD is served wherever GET is (the carrier sends the headers only).
   */
  match(method: string, path: string): Match | undefined {
    const served = method === 'HEAD' ? 'GET' : method;
    // An empty segment inside the path is an empty parameter (`/dags//rename` names no DAG), not
    // no segment; a trailing slash is ignored.
    const parts = path.replace(/^\//, '').replace(/\/$/, '').split('/');
    let best: { route: Route; params: Record<string, string>; literals: number } | undefined;
    const allowed = new Set<string>();
    for (const route of this.routes) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let literals = 0;
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const segment = route.segments[i];
        if (segment.startsWith(':')) {
          let value: string;
          try {
            value = decodeURIComponent(parts[i]);
          } catch {
            throw new AppError('bad_request', 'malformed path segment');
          }
          params[segment.slice(1)] = value;
        } else if (segment === parts[i]) {
          literals++;
        } else {
          ok = false;
        }
      }
      if (!ok) continue;
      allowed.add(route.method);
      if (route.method !== served) continue;
      if (!best || literals > best.literals) best = { route, params, literals };
    }
    if (best) {
      const { route } = best;
      return {
        handler: route.handler, params: best.params, pattern: route.pattern, public: route.public === true,
        permission: route.permission ?? 'admin', writes: route.writes === true, tokenInQuery: route.tokenInQuery === true,
      };
    }
    if (allowed.size > 0) {
      const allow = withHead(allowed);
      throw new AppError('method_not_allowed', `${method} is not served at ${path}; it serves ${allow.join(', ')}`, { allow });
    }
    return undefined;
  }

  /** The methods a path is served with (HEAD wherever GET is), sorted; none for a path not served. */
  methodsAt(path: string): string[] {
    try {
      // OPTIONS is never a route's method: the answer is the 405's Allow list, or no match.
      this.match('OPTIONS', path);
      return [];
    } catch (error) {
      return error instanceof AppError && error.code === 'method_not_allowed' ? error.details!.allow as string[] : [];
    }
  }
}

function withHead(methods: Set<string>): string[] {
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

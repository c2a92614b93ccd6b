// Cross-origin requests from browsers (off by default): with `cors.allowOrigins` set, a request
// whose Origin is allowed gets Access-Control-Allow-Origin, and a preflight (OPTIONS with
// Access-Control-Request-Method) is answered 204 with the methods its path is served with.
import type { HttpResponse, RawRequest } from './types.ts';
import { varyAlso } from './vary.ts';

export interface CorsOptions {
  /** Origins allowed (`https://app.example.com`), or `*` for any; empty: CORS is off. */
  allowOrigins: readonly string[];
}

/** How long a browser may keep a preflight's answer. */
const MAX_AGE_SEC = 600;

export class Cors {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(options: CorsOptions) {
    this.any = options.allowOrigins.includes('*');
    this.origins = new Set(options.allowOrigins);
  }

  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }

  /** The Allow-Origin value for a request's Origin; undefined when it is not allowed. */
  private allowed(origin: string | undefined): string | undefined {
    if (origin === undefined || origin === '') return undefined;
    if (this.any) return '*';
    return this.origins.has(origin) ? origin : undefined;
  }

  /** A preflight's answer, or undefined when the request is none (or its origin is not allowed). */
  preflight(request: RawRequest, methodsAt: (path: string) => string[]): HttpResponse | undefined {
    if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method']) return undefined;
    const origin = this.allowed(request.headers.origin);
    if (!origin) return undefined;
    const methods = methodsAt(request.path);
    if (methods.length === 0) return undefined;
    const headers: Record<string, string> = {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': methods.join(', '),
      'access-control-allow-headers': request.headers['access-control-request-headers'] || 'content-type, authorization',
      'access-control-max-age': String(MAX_AGE_SEC),
      vary: 'Origin',
    };
    return { status: 204, headers, body: undefined };
  }

  /** The response with the headers that let the request's origin read it, when it is allowed. */
  decorate(request: RawRequest, response: HttpResponse): HttpResponse {
    const origin = this.allowed(request.headers.origin);
    if (!origin) return response;
    return { ...response, headers: { ...response.headers, 'access-control-allow-origin': origin, vary: varyAlso(response.headers?.vary, 'Origin') } };
  }
}

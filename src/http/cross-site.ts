// Cross-site request forgery: a page on another site can make a visitor's browser send requests
// here that carry what the browser adds by itself (the session cookie, Basic credentials it
// remembers, or nothing at all where authentication is off and reaching the server is enough).
// Such requests are refused when the browser says they come from elsewhere. A Bearer token is never
// added by a browser, so a request that carries one is whoever holds it: it is not refused here.
import { parseCookie } from 'cookie';
import { AppError } from '../core/index.ts';
import { SESSION_COOKIE } from '../auth/index.ts';
import type { RawRequest } from './types.ts';

/** Methods that change nothing; the routes that do change something with GET say so (`RouteOptions.writes`). */
export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SiteOptions {
  /** `cors.allowOrigins`: origins (`https://app.example.com`) whose pages may call the API; `*`: any. */
  allowOrigins: readonly string[];
  /** The server's own origins beside the Host it is called at (the OIDC clientUrl behind a proxy). */
  ownOrigins: readonly string[];
}

/**
 * Throws forbidden when a request that changes something comes from a page of another site and
 * carries no Bearer token. The browser's Origin decides when it sends one (the server's own
 * host, as the Host or X-Forwarded-Host header names it, or an allowed origin); else its
 * Sec-Fetch-Site (same-origin, or none for an address typed by the user). A client that is no
 * browser sends neither and is not concerned.
 */
export function refuseCrossSite(raw: RawRequest, options: SiteOptions): void {
  if (/^\s*bearer\s/i.test(raw.headers.authorization ?? '')) return;
  const origin = raw.headers.origin;
  if (origin !== undefined && origin !== '') {
    if (sameHost(origin, raw.headers) || options.allowOrigins.includes('*') || options.allowOrigins.includes(origin) || options.ownOrigins.includes(origin)) return;
    throw new AppError('forbidden', `cross-site request refused: a page of ${origin} may not do this with the browser's credentials (send a Bearer token, or list the origin in cors.allowOrigins)`);
  }
  const site = raw.headers['sec-fetch-site'];
  if (site === undefined || site === 'same-origin' || site === 'none') return;
  throw new AppError('forbidden', `cross-site request refused: the browser sent it from another site (Sec-Fetch-Site: ${site})`);
}

/**
 * Throws unsupported_media_type for a request authenticated by the session cookie whose
 * Content-Type is present and is not JSON: a form (urlencoded, multipart) or text/plain is what a
 * page of another site can make a browser send without asking the server first, and JSON.parse
 * reads some of them. This holds even for a browser that sends neither Origin nor Sec-Fetch-Site.
 * Other clients may leave the JSON unlabelled as before (curl -d sends a form type, fetch()
 * text/plain): they use a token, Basic credentials or nothing, never the cookie.
 */
export function refuseCookieForm(raw: RawRequest): void {
  const contentType = raw.headers['content-type'];
  if (contentType === undefined || contentType.trim() === '' || isJson(contentType)) return;
  if ((raw.headers.authorization ?? '').trim() !== '' || parseCookie(raw.headers.cookie ?? '')[SESSION_COOKIE] === undefined) return;
  throw new AppError('unsupported_media_type', `a request signed in by the session cookie must send its body as JSON (Content-Type: application/json), not ${contentType.split(';')[0].trim()}`);
}

function isJson(contentType: string): boolean {
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return mediaType === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(mediaType);
}

/** Whether the Origin's host and port are the ones the request was sent to (any scheme: a proxy may end TLS). */
function sameHost(origin: string, headers: Record<string, string>): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  if (host === '') return false;
  const forwarded = headers['x-forwarded-host']?.split(',')[0].trim();
  return [headers.host, forwarded].some((candidate) => candidate !== undefined && candidate.toLowerCase() === host);
}

// GET /auth/oidc/login and /auth/oidc/callback: sign-in with an OIDC provider (config.yaml
// `auth.oidc`), ending in the session cookie. Both are public: they are how credentials are got.
import { parseCookie, stringifySetCookie } from 'cookie';
import { AppError } from '../../core/index.ts';
import { OIDC_PATH, SESSION_COOKIE, TRANSACTION_TTL_SEC, type OidcSignIn } from '../../auth/index.ts';
import { enumQuery } from '../query.ts';
import { LoginResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import type { ApiDeps, HttpRequest, HttpResponse } from '../types.ts';

/** Carries the login in progress from the redirect to the callback, and is sent to those two only. */
const TRANSACTION_COOKIE = 'troupe_oidc';
const FormatQuery = enumQuery('format', '`json`: the callback answers {token, expiresAt, user} instead of redirecting to clientUrl', ['json']);

function configured(deps: ApiDeps): OidcSignIn {
  if (!deps.oidc) throw new AppError('not_found', 'OIDC login is not configured on this server (auth.oidc)');
  return deps.oidc;
}

/** Cookies are Secure when browsers reach troupe over https (clientUrl), whatever carries the request behind a proxy. */
const secure = (oidc: OidcSignIn) => oidc.settings.clientUrl.startsWith('https:');

async function login(request: HttpRequest, deps: ApiDeps): Promise<HttpResponse> {
  const oidc = configured(deps);
  const { url, transaction } = await oidc.begin(FormatQuery.read(request.query) === 'json');
  // Lax: the browser comes back to the callback from the provider's site, and must bring it.
  const cookie = stringifySetCookie(TRANSACTION_COOKIE, transaction, {
    path: OIDC_PATH, httpOnly: true, sameSite: 'lax', secure: secure(oidc), maxAge: TRANSACTION_TTL_SEC,
  });
  return { status: 302, headers: { location: url, 'set-cookie': cookie, 'cache-control': 'no-store' } };
}

async function callback(request: HttpRequest, deps: ApiDeps): Promise<HttpResponse> {
  const oidc = configured(deps);
  const sealed = parseCookie(request.headers.cookie ?? '')[TRANSACTION_COOKIE];
  const { token, expiresAt, user, json } = await oidc.complete(request.query, sealed);
  // Strict, as every session cookie (a cross-site link must not carry it: GET .../dequeue changes a
  // run). A browser stores it all the same; the redirect below, part of a navigation begun at the
  // provider, goes without it, and the requests after it carry it.
  const cookie = stringifySetCookie(SESSION_COOKIE, token, {
    path: '/', httpOnly: true, sameSite: 'strict', secure: secure(oidc), expires: new Date(expiresAt),
  });
  const headers = { 'set-cookie': cookie, 'cache-control': 'no-store' };
  if (json || wantsJson(request.headers.accept)) return { status: 200, headers, body: { token, expiresAt, user } };
  return { status: 302, headers: { ...headers, location: `${oidc.settings.clientUrl}/` } };
}

/** A script asking for JSON; a browser's navigation always names text/html. */
function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('application/json') && !accept.includes('text/html');
}

const SET_COOKIE = 'The session cookie `troupe_session` (HttpOnly, SameSite=Strict, Path=/, Secure when clientUrl is https)';

export function oidcRoutes(router: Router): void {
  router.add('GET', '/auth/oidc/login', login, {
    public: true,
    operationId: 'oidcLogin',
    summary: 'Begin a login with the OIDC provider',
    description: 'Redirects the browser to the provider (authorization code flow with PKCE). State, nonce and the PKCE verifier ride in a sealed, HttpOnly '
      + `cookie sent to /api/v2/auth/oidc only, for ${TRANSACTION_TTL_SEC / 60} minutes. With \`format=json\` the callback answers JSON instead of redirecting. `
      + 'Register `{clientUrl}/api/v2/auth/oidc/callback` as the redirect URI with the provider.',
    tag: 'auth',
    query: [FormatQuery],
    responses: {
      302: { description: 'To the provider\'s authorization endpoint (Location); sets the cookie of the login in progress', headers: { location: 'The provider\'s authorization URL', 'set-cookie': 'The login in progress (`troupe_oidc`)' } },
    },
    errors: ['not_found', 'bad_gateway', 'bad_request'],
  });
  router.add('GET', '/auth/oidc/callback', callback, {
    public: true,
    operationId: 'oidcCallback',
    summary: 'Where the OIDC provider sends the browser back',
    description: 'Checks the state against the login in progress, exchanges the code (PKCE) and checks the ID token (nonce), admits the account '
      + '(auth.oidc whitelist and allowedDomains), finds or creates its user (username: the email; role: from roleMapping at each sign-in, else roleMapping.defaultRole), and sets the session cookie. '
      + 'Redirects to clientUrl, or answers JSON when the login was begun with `format=json` or this request accepts application/json but not text/html.',
    tag: 'auth',
    responses: {
      200: { description: 'Logged in (JSON asked for): the session token, as `/auth/login` gives it; the cookie is set too', body: LoginResponse, headers: { 'set-cookie': SET_COOKIE } },
      302: { description: 'Logged in: to clientUrl, with the session cookie', headers: { location: 'clientUrl', 'set-cookie': SET_COOKIE } },
    },
    errors: ['unauthorized', 'forbidden', 'not_found', 'bad_gateway', 'bad_request', 'insufficient_storage'],
  });
}

// Signing in and the caller's own account: POST /auth/login, /auth/logout, GET /auth/me, POST /auth/change-password.
import { stringifySetCookie } from 'cookie';
import { AppError } from '../../core/index.ts';
import { SESSION_COOKIE, userView, type Auth, type Identity, type UserView } from '../../auth/index.ts';
import { ChangePasswordBody, LoginBody } from '../auth-schemas.ts';
import { LoginResponse, SignInMethodsResponse, SuccessResponse, UserResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { parseBody } from '../schemas.ts';
import { json, type ApiDeps, type HttpRequest, type HttpResponse } from '../types.ts';

/** The server's Auth; an API made without one (an embedder's) has no accounts. */
export function authOf(deps: ApiDeps): Auth {
  if (!deps.auth) throw new AppError('not_found', 'this server keeps no users');
  return deps.auth;
}

/**
 * Secure when the browser reached troupe over https: troupe serves TLS itself, or a proxy ending
 * TLS says so. The cookie must still work over plain http on 127.0.0.1.
 */
const overHttps = (request: HttpRequest, deps: ApiDeps) => deps.servesTls === true || request.headers['x-forwarded-proto']?.split(',')[0]?.trim() === 'https';

// The token is in the answer for scripts, and in an HttpOnly cookie for the dashboard, whose
// script then never holds it. Strict, as every session cookie of troupe (auth.md).
async function login(request: HttpRequest, deps: ApiDeps): Promise<HttpResponse> {
  const body = await parseBody(LoginBody, request.body);
  const session = await authOf(deps).login(body.username, body.password, request.remoteAddress);
  const cookie = stringifySetCookie(SESSION_COOKIE, session.token, {
    path: '/', httpOnly: true, sameSite: 'strict', secure: overHttps(request, deps), expires: new Date(session.expiresAt),
  });
  return { status: 200, headers: { 'set-cookie': cookie, 'cache-control': 'no-store' }, body: session };
}

/** Ends the browser's session cookie; the token itself stays valid until it expires (a password change ends them all). */
function logout(request: HttpRequest, deps: ApiDeps): HttpResponse {
  const cookie = stringifySetCookie(SESSION_COOKIE, '', { path: '/', httpOnly: true, sameSite: 'strict', secure: overHttps(request, deps), expires: new Date(0) });
  return { status: 200, headers: { 'set-cookie': cookie, 'cache-control': 'no-store' }, body: { message: 'Signed out' } };
}

/** Credentials that are not a stored user (static ones, an API key, auth off) are shown as such a user, without an id. */
function callerView(identity: Identity, deps: ApiDeps): UserView {
  const stored = identity.userId === undefined ? undefined : deps.auth?.accounts.user(identity.userId);
  return stored ? userView(stored) : { id: '', username: identity.username, role: identity.role, createdAt: '', updatedAt: '' };
}

function me(request: HttpRequest, deps: ApiDeps) {
  return json({ user: callerView(request.identity, deps) });
}

/** How one signs in here, for a sign-in page: asking changes nothing and reaches no provider. */
function signInMethods(_request: HttpRequest, deps: ApiDeps) {
  const auth = deps.auth;
  return json({ required: auth?.enabled ?? false, password: auth?.mode === 'builtin', oidc: deps.oidc !== undefined });
}

async function changePassword(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(ChangePasswordBody, request.body);
  await authOf(deps).changeOwnPassword(request.identity, body.currentPassword, body.newPassword, request.remoteAddress);
  return json({ message: 'Password changed; sign in again' });
}

export function authRoutes(router: Router): void {
  router
    .add('POST', '/auth/login', login, {
      public: true,
      operationId: 'login', summary: 'Sign in with a username and password: a session token', tag: 'auth',
      description: 'Failed attempts are limited per username and per client address: past the limit, 429 `too_many_requests` with Retry-After.',
      body: LoginBody,
      responses: { 200: { description: 'Signed in; the same token is set as the session cookie `troupe_session` (HttpOnly, SameSite=Strict, Path=/)', body: LoginResponse, headers: { 'set-cookie': 'The session cookie `troupe_session`' } } },
      errors: ['bad_request', 'unauthorized', 'too_many_requests', 'not_found'],
    })
    .add('POST', '/auth/logout', logout, {
      public: true,
      operationId: 'logout', summary: 'Sign the browser out: clears the session cookie', tag: 'auth',
      description: 'The token itself stays valid until it expires; changing the password ends every session token.',
      responses: { 200: { description: 'The cookie is cleared', body: SuccessResponse, headers: { 'set-cookie': 'The session cookie, expired' } } },
    })
    .add('GET', '/auth/methods', signInMethods, {
      public: true,
      operationId: 'getSignInMethods', summary: 'How to sign in: whether credentials are needed, with a password, or with the OIDC provider', tag: 'auth',
      responses: { 200: { description: 'The sign-in methods', body: SignInMethodsResponse } },
    })
    .add('GET', '/auth/me', me, {
      permission: 'read',
      operationId: 'getCurrentUser', summary: 'Who the credentials belong to', tag: 'auth',
      description: 'Credentials that are not a stored user (the static ones, an API key, authentication off) answer with an empty `id` and times.',
      responses: { 200: { description: 'The caller', body: UserResponse } },
    })
    .add('POST', '/auth/change-password', changePassword, {
      permission: 'read',
      operationId: 'changePassword', summary: 'Change the caller\'s own password; their session tokens stop working', tag: 'auth',
      body: ChangePasswordBody,
      responses: { 200: { description: 'Changed', body: SuccessResponse } },
      errors: ['bad_request', 'unauthorized', 'not_found', 'too_many_requests', 'insufficient_storage'],
    });
}

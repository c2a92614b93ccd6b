// Who a request comes from, as authentication found it, and the session a signed-in user gets.
// What other sign-in ways (OIDC) build on: `Auth.findOrCreateUser` to get a stored user,
// `Auth.issueSession` to get the session token, handed to the client as SESSION_COOKIE or returned
// for `Authorization: Bearer`; the API accepts the same token either way.
import type { Role, UserRecord } from '../core/index.ts';

/**
 * `none`: authentication is off (mode none without static credentials), everything is permitted;
 * `basic`: Basic credentials, of a stored user (`userId` set) or the static `auth.basic` pair;
 * `token`: the static `auth.token.value`; `jwt`: a session token of a stored user (`Authorization:
 * Bearer` or the session cookie); `apiKey`: an API key as a Bearer token; `oidc`: a session made at
 * an OIDC sign-in (its user is stored, like a builtin user's).
 */
export type IdentityKind = 'none' | 'basic' | 'token' | 'jwt' | 'apiKey' | 'oidc';

export interface Identity {
  kind: IdentityKind;
  /** The stored user's id; absent for none, static credentials and API keys. */
  userId?: string;
  /** The stored user's name, the static Basic username, the API key's name, or a fixed label. */
  username: string;
  role: Role;
  /** The API key's id, for `apiKey`. */
  apiKeyId?: string;
}

/**
 * The cookie the API reads a session token from when the request has no Authorization header.
 * Whoever sets it sets it HttpOnly, SameSite=Strict (with Lax a browser would send it on a
 * cross-site link, and GET .../dequeue changes a run) and Secure under TLS.
 */
export const SESSION_COOKIE = 'troupe_session';

export interface SessionToken {
  /** A JWT (HS256) naming the user and their token version; send as `Bearer` or SESSION_COOKIE. */
  token: string;
  /** ISO 8601: when the token stops being accepted. */
  expiresAt: string;
}

/** A user as the API shows one: never the password hash nor the token version. */
export interface UserView {
  id: string;
  username: string;
  role: Role;
  createdAt: string;
  updatedAt: string;
}

export function userView(user: UserRecord): UserView {
  return { id: user.id, username: user.username, role: user.role, createdAt: user.createdAt, updatedAt: user.updatedAt };
}

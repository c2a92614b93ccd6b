// Authentication and authorization of API requests: which credentials are accepted in each mode,
// who they belong to, and whether their role may do what a route needs. Also the sign-in that
// issues session tokens. Secrets are compared in constant time and never reach a message or a log.
import { randomBytes } from 'node:crypto';
import { AppError, type Clock, type Role, type UserRecord, type UserStore } from '../core/index.ts';
import { Accounts } from './accounts.ts';
import { apiKeyHash, looksLikeApiKey } from './api-keys.ts';
import { sameSecret } from './constant-time.ts';
import { readCredentials } from './credentials.ts';
import { userView, type Identity, type SessionToken, type UserView } from './identity.ts';
import { DEFAULT_LOGIN_LIMITS, LoginLimiter, type LoginLimits } from './login-limiter.ts';
import { passwordMatches } from './passwords.ts';
import { VerifiedPasswords } from './verified-passwords.ts';
import { ALL_PERMITTED, refusal, type Permission, type PermissionSwitches } from './roles.ts';
import { Sessions } from './sessions.ts';
import type { AuthInForce, AuthMode, AuthSettings } from './auth-settings.ts';

export { AUTH_MODES, type AuthInForce, type AuthMode, type AuthSettings } from './auth-settings.ts';

export const DEFAULT_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_PUBLIC_PATHS = ['/health'];
const SECRET_NAME = 'session-signing-key';
/** How often an API key's lastUsedAt is written at most: not a write per request. */
const LAST_USED_EVERY_MS = 60_000;

const NOBODY: Identity = { kind: 'none', username: 'anonymous', role: 'admin' };

export class Auth {
  readonly mode: AuthMode;
  /** Whether requests must carry credentials: a mode other than none, or static credentials. */
  readonly enabled: boolean;
  readonly accounts: Accounts;
  readonly switches: PermissionSwitches;
  private readonly publicPaths: Set<string>;
  private readonly limiter: LoginLimiter;
  private readonly lastUsedWritten = new Map<string, number>();
  /** Basic credentials of stored users, verified once per password rather than per request. */
  private readonly verified = new VerifiedPasswords();

  private constructor(
    private readonly settings: AuthInForce,
    private readonly store: UserStore,
    private readonly sessions: Sessions,
    private readonly clock: Clock,
    previous?: Auth,
  ) {
    this.mode = settings.mode;
    this.enabled = this.mode !== 'none' || settings.basic !== undefined || settings.token !== undefined;
    this.accounts = new Accounts(store, clock);
    this.switches = { ...ALL_PERMITTED, ...settings.permissions };
    this.publicPaths = new Set((settings.publicPaths ?? DEFAULT_PUBLIC_PATHS).map(normalPath));
    const limits = settings.loginLimits ?? DEFAULT_LOGIN_LIMITS;
    const sameLimits = previous !== undefined && JSON.stringify(previous.settings.loginLimits ?? DEFAULT_LOGIN_LIMITS) === JSON.stringify(limits);
    this.limiter = sameLimits ? previous.limiter : new LoginLimiter(limits);
  }

  /**
   * Ready to serve: the signing secret (the configured one, else the one kept in the store, else a
   * new one kept there, so sessions outlive a restart) and, when no user exists, the first admin.
   */
  /**
   * `previous`: the Auth these settings replace (a reload); its sign-in attempt counts carry over
   * while the limits stay the same, so that a reload is no way around them.
   */
  static async open(settings: AuthInForce, store: UserStore, clock: Clock, previous?: Auth): Promise<Auth> {
    let secret = settings.tokenSecret ?? store.secret(SECRET_NAME);
    if (!secret) {
      secret = randomBytes(32).toString('base64url');
      await store.setSecret(SECRET_NAME, secret);
    }
    const auth = new Auth(settings, store, new Sessions(secret, settings.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS, clock), clock, previous);
    if (store.users().length === 0) {
      const password = settings.admin?.password;
      if (password) {
        await auth.accounts.createUser({ username: settings.admin?.username || 'admin', password, role: 'admin' });
      } else if (auth.mode === 'builtin' && !settings.basic && !settings.token) {
        throw new AppError('bad_request', 'auth.mode builtin: no user exists yet; set auth.builtin.admin.password (TROUPE_AUTH_ADMIN_PASSWORD) to create the first admin');
      }
    }
    return auth;
  }

  /** Whether `apiPath` (below /api/v2) is served to anyone (`auth.publicPaths`). */
  isPublicPath(apiPath: string): boolean {
    return this.publicPaths.has(normalPath(apiPath));
  }

  /** Who sent the request; throws unauthorized for missing or invalid credentials. */
  async authenticate(headers: Record<string, string | undefined>, address?: string): Promise<Identity> {
    if (!this.enabled) return NOBODY;
    const credentials = readCredentials(headers);
    switch (credentials.kind) {
      case 'none':
        throw new AppError('unauthorized', 'Authentication required: Basic credentials, or a Bearer token or API key');
      case 'malformed':
        throw new AppError('unauthorized', 'The Authorization header is neither Basic credentials nor a Bearer token');
      case 'basic':
        return this.basic(credentials.username, credentials.password, address);
      case 'bearer':
        return this.bearer(credentials.token);
      case 'cookie':
        return this.session(credentials.token);
    }
  }

  /** How many sign-in counts are kept, per username slot and per address slot (bounded: login-limiter.ts). */
  signInCounts(): { users: number; addresses: number } {
    return this.limiter.counts();
  }

  /** Throws forbidden when the identity's role, or the server's permission switches, refuse `permission`. */
  authorize(identity: Identity, permission: Permission): void {
    const why = refusal(identity.role, permission, this.switches);
    if (why) throw new AppError('forbidden', why);
  }

  /** POST /auth/login: a session for a stored user's username and password. */
  async login(username: string, password: string, address?: string): Promise<SessionToken & { user: UserView }> {
    const user = await this.checkPassword(username, password, address);
    return { ...(await this.issueSession(user)), user: userView(user) };
  }

  /** POST /auth/change-password: the current password is checked under the sign-in limits. */
  changeOwnPassword(actor: Identity, currentPassword: string, newPassword: string, address?: string): Promise<void> {
    return this.accounts.changeOwnPassword(actor, currentPassword, newPassword, {
      attempt: (username) => this.limiter.attempt(username, address),
      succeeded: (username) => this.limiter.succeeded(username, address),
    });
  }

  /** A session token for a stored user: for POST /auth/login, and for a sign-in made elsewhere (OIDC). */
  issueSession(user: UserRecord): Promise<SessionToken> {
    return this.sessions.issue({ userId: user.id, tokenVersion: user.tokenVersion });
  }

  /** The stored user of that name, or a new one with `role` and no password (an OIDC sign-in). */
  findOrCreateUser(username: string, role: Role): Promise<UserRecord> {
    return this.accounts.findOrCreate(username, role);
  }

  private async basic(username: string, password: string, address: string | undefined): Promise<Identity> {
    const fixed = this.settings.basic;
    if (fixed) {
      // Both compared, always: which half was wrong must not show in the time taken.
      const sameUser = sameSecret(username, fixed.username);
      const samePassword = sameSecret(password, fixed.password);
      if (sameUser && samePassword) return { kind: 'basic', username: fixed.username, role: 'admin' };
    }
    // A password verified before is recognised without argon2 and without counting an attempt;
    // past a limit, it is refused all the same.
    await this.limiter.check(username, address);
    const stored = this.store.userByName(username);
    if (stored && this.verified.matches(username, password, stored.passwordHash)) {
      return { kind: 'basic', userId: stored.id, username: stored.username, role: stored.role };
    }
    const user = await this.checkPassword(username, password, address);
    if (user.passwordHash) this.verified.remember(username, password, user.passwordHash);
    return { kind: 'basic', userId: user.id, username: user.username, role: user.role };
  }

  /** The attempt is counted before the password is checked: attempts sent at once cannot all pass the limits before any fails. */
  private async checkPassword(username: string, password: string, address: string | undefined): Promise<UserRecord> {
    await this.limiter.attempt(username, address);
    const user = this.store.userByName(username);
    if (!(await passwordMatches(password, user?.passwordHash)) || !user) throw new AppError('unauthorized', 'Invalid username or password');
    await this.limiter.succeeded(username, address);
    return user;
  }

  private async bearer(token: string): Promise<Identity> {
    if (this.settings.token !== undefined && sameSecret(token, this.settings.token)) return { kind: 'token', username: 'token', role: 'admin' };
    if (looksLikeApiKey(token)) return this.apiKey(token);
    return this.session(token);
  }

  private async apiKey(key: string): Promise<Identity> {
    // The lookup is by the key's hash: nothing of the key itself is compared.
    const record = this.store.apiKeyByHash(apiKeyHash(key));
    if (!record) throw new AppError('unauthorized', 'Invalid or revoked API key');
    const now = this.clock.now();
    if (now - (this.lastUsedWritten.get(record.id) ?? 0) >= LAST_USED_EVERY_MS) {
      this.lastUsedWritten.set(record.id, now);
      // Best effort: the key was revoked or renamed meanwhile, or the write failed; the request goes on.
      void this.store.updateApiKey({ ...record, lastUsedAt: new Date(now).toISOString() }).catch(() => undefined);
    }
    return { kind: 'apiKey', username: record.name, role: record.role, apiKeyId: record.id };
  }

  private async session(token: string): Promise<Identity> {
    const claims = this.sessions.verify(token);
    const user = claims ? this.store.user(claims.userId) : undefined;
    // A deleted user, or a password changed since the token was issued.
    if (!claims || !user || user.tokenVersion !== claims.tokenVersion) throw new AppError('unauthorized', 'Invalid or expired token');
    return { kind: user.source === 'oidc' ? 'oidc' : 'jwt', userId: user.id, username: user.username, role: user.role };
  }
}

function normalPath(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

// What an OIDC login makes: an admitted account becomes a stored user (found, or created with the
// configured role) and gets a session token, the same the API accepts from a password login.
import { AppError, type Role, type UserRecord } from '../../core/index.ts';
import { log } from '../../logging/index.ts';
import type { Auth } from '../auth.ts';
import { userView, type SessionToken, type UserView } from '../identity.ts';
import { refusal, type OidcIdentity } from './admission.ts';
import { OidcLogin, type LoginStart } from './oidc-login.ts';
import { RoleExpression, type JqRunner } from './role-expression.ts';
import { mapRole } from './role-mapping.ts';
import type { OidcSettings } from './settings.ts';

export interface SignedIn extends SessionToken {
  user: UserView;
  /** The login was begun with `format=json`. */
  json: boolean;
}

/** The role a sign-in gives, and what gave it (for the log). */
interface RoleOfSignIn {
  role: Role;
  by: 'roleAttributePath' | 'groupMappings' | 'defaultRole';
}

export interface SignInOptions {
  /** Seconds to wait for the provider. */
  timeoutSec?: number;
  /** Runs roleAttributePath (required with it). */
  jq?: JqRunner;
}

export class OidcSignIn {
  readonly login: OidcLogin;
  private readonly expression: RoleExpression | undefined;

  constructor(readonly settings: OidcSettings, private readonly auth: Auth, options: SignInOptions = {}) {
    this.login = new OidcLogin(settings, options);
    const path = settings.roleMapping?.roleAttributePath;
    if (path !== undefined && !options.jq) throw new AppError('bad_request', 'auth.oidc: roleMapping.roleAttributePath needs jq, which this process does not offer');
    this.expression = path === undefined ? undefined : new RoleExpression(path, options.jq!);
  }

  /** bad_request for a roleAttributePath jq cannot compile: the server does not start with it. */
  async check(): Promise<void> {
    await this.expression?.check();
  }

  /** Discovers the issuer now, so that a wrong or unreachable one is told at start; the server starts all the same. */
  async warmUp(): Promise<void> {
    try {
      await this.login.provider();
    } catch (error) {
      log.warn(`${(error as Error).message}; OIDC logins answer 502 until it can be reached (tried again at each login)`);
    }
  }

  begin(json: boolean): Promise<LoginStart> {
    return this.login.begin(json);
  }

  /** unauthorized for a login that fails; forbidden for an account that may not log in here. */
  async complete(query: URLSearchParams, sealedTransaction: string | undefined): Promise<SignedIn> {
    const { identity, claims, json } = await this.login.complete(query, sealedTransaction);
    const user = await this.userOf(identity, claims);
    log.info({ userId: user.id, role: user.role, emailDomain: domainOf(identity.email) }, 'OIDC login');
    return { ...(await this.auth.issueSession(user)), user: userView(user), json };
  }

  private async userOf(identity: OidcIdentity, claims: Record<string, unknown>): Promise<UserRecord> {
    const refuse = (why: string) => {
      // The domain only: an address is personal data, and the refused one need not be logged whole.
      log.warn({ emailDomain: domainOf(identity.email) }, `OIDC login refused: ${why}`);
      return new AppError('forbidden', `OIDC login refused: ${why}`);
    };
    const why = refusal(identity, this.settings);
    if (why) throw refuse(why);
    // The user's name is their email: a provider's `sub` means nothing to a person, and an admin
    // may create the user of an address beforehand (autoSignup off) with the role it should have.
    if (!identity.email) throw refuse('the identity provider gave no email (is the email scope requested?)');
    if (identity.emailVerified === false) throw refuse('the identity provider has not verified this account\'s email');
    const known = this.auth.accounts.userByName(identity.email);
    if (!known && !this.settings.autoSignup) throw refuse('no user has this email as username, and autoSignup is off');
    const mapping = this.settings.roleMapping;
    // Without a mapping, or with skipOrgRoleSync, a known user keeps the role stored (an admin's to change).
    if (known && (!mapping || mapping.skipOrgRoleSync)) return known;
    const given = await this.roleOf(claims, refuse);
    if (!known) return this.auth.findOrCreateUser(identity.email, given.role);
    // Read again: an admin may have changed the user while the expression ran.
    const user = this.auth.accounts.user(known.id);
    if (user.role === given.role) return user;
    // Every session of the user reads the role stored at each request: the new one applies to them all at once.
    log.info({ userId: user.id, from: user.role, to: given.role, by: given.by }, 'OIDC login: the role mapping changed the user\'s role');
    return this.auth.accounts.assignRole(user.id, given.role);
  }

  /** The mapped role, else defaultRole; with roleAttributeStrict, a refusal when nothing maps. */
  private async roleOf(claims: Record<string, unknown>, refuse: (why: string) => AppError): Promise<RoleOfSignIn> {
    const mapping = this.settings.roleMapping;
    if (!mapping) return { role: this.settings.defaultRole, by: 'defaultRole' };
    const mapped = mapRole(claims, mapping, await this.expression?.evaluate(claims));
    if (mapped.role !== undefined) return mapped;
    // The expression's error has its quoted values masked (role-expression.ts).
    if (mapped.expressionProblem) log.warn(`OIDC login: roleMapping.roleAttributePath failed: ${mapped.expressionProblem}`);
    if (mapping.roleAttributeStrict) throw refuse('no role: neither roleAttributePath nor groupMappings gives this account a role, and roleAttributeStrict is on');
    return { role: this.settings.defaultRole, by: 'defaultRole' };
  }
}

/**
 * The OIDC sign-in `settings` configure, or undefined when they are absent; bad_request for a
 * roleAttributePath jq cannot compile. Discovery starts in the background: an issuer that cannot be
 * reached is logged, and logins answer 502 until it can be.
 */
export async function openOidcSignIn(settings: OidcSettings | undefined, auth: Auth, options: SignInOptions = {}): Promise<OidcSignIn | undefined> {
  if (!settings) {
    if (auth.mode === 'oidc') throw new AppError('bad_request', 'auth.mode oidc needs auth.oidc: clientId, issuer and clientUrl (TROUPE_AUTH_OIDC_CLIENT_ID, TROUPE_AUTH_OIDC_ISSUER, TROUPE_AUTH_OIDC_CLIENT_URL)');
    return undefined;
  }
  if (auth.mode === 'none') {
    // With authentication off a session would grant nothing more than no credentials do.
    log.warn('auth.oidc is set but auth.mode is none: OIDC login is off (set auth.mode to oidc or builtin)');
    return undefined;
  }
  const signIn = new OidcSignIn(settings, auth, options);
  await signIn.check();
  void signIn.warmUp();
  return signIn;
}

function domainOf(email: string | undefined): string | undefined {
  return email?.includes('@') ? email.slice(email.lastIndexOf('@') + 1) : undefined;
}

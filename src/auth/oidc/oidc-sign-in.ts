// What an OIDC login makes: an admitted account becomes a stored user (found, or created with the
// configured role) and gets a session token, the same the API accepts from a password login.
import { AppError, type UserRecord } from '../../core/index.ts';
import { log } from '../../logging/index.ts';
import type { Auth } from '../auth.ts';
import { userView, type SessionToken, type UserView } from '../identity.ts';
import { refusal, type OidcIdentity } from './admission.ts';
import { OidcLogin, type LoginStart } from './oidc-login.ts';
import type { OidcSettings } from './settings.ts';

export interface SignedIn extends SessionToken {
  user: UserView;
  /** The login was begun with `format=json`. */
  json: boolean;
}

export class OidcSignIn {
  readonly login: OidcLogin;

  constructor(readonly settings: OidcSettings, private readonly auth: Auth, options: { timeoutSec?: number } = {}) {
    this.login = new OidcLogin(settings, options);
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
    const { identity, json } = await this.login.complete(query, sealedTransaction);
    const user = await this.userOf(identity);
    log.info({ userId: user.id, role: user.role, emailDomain: domainOf(identity.email) }, 'OIDC login');
    return { ...(await this.auth.issueSession(user)), user: userView(user), json };
  }

  private async userOf(identity: OidcIdentity): Promise<UserRecord> {
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
    if (this.settings.autoSignup) return this.auth.findOrCreateUser(identity.email, this.settings.defaultRole);
    const known = this.auth.accounts.listUsers().find((user) => user.username === identity.email);
    if (!known) throw refuse('no user has this email as username, and autoSignup is off');
    return this.auth.accounts.user(known.id);
  }
}

/**
 * The OIDC sign-in `settings` configure, or undefined when they are absent. Discovery starts in the
 * background: an issuer that cannot be reached is logged, and logins answer 502 until it can be.
 */
export function openOidcSignIn(settings: OidcSettings | undefined, auth: Auth, options: { timeoutSec?: number } = {}): OidcSignIn | undefined {
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
  void signIn.warmUp();
  return signIn;
}

function domainOf(email: string | undefined): string | undefined {
  return email?.includes('@') ? email.slice(email.lastIndexOf('@') + 1) : undefined;
}

// The authorization-code flow with an OIDC provider (openid-client): discovery of the issuer, the
// redirect with state, nonce and PKCE, and the callback's checks and code exchange. It answers who
// logged in; what a login then makes (a user, a session) is the caller's.
import { timingSafeEqual } from 'node:crypto';
import type * as client from 'openid-client';
import { AppError } from '../../core/index.ts';
import type { OidcIdentity } from './admission.ts';
import type { OidcSettings } from './settings.ts';
import { TransactionSealer } from './transaction.ts';

/** Where below clientUrl the provider sends the browser back (register it with the provider). */
export const OIDC_PATH = '/api/v2/auth/oidc';
export const CALLBACK_PATH = `${OIDC_PATH}/callback`;
export const LOGIN_PATH = `${OIDC_PATH}/login`;

export interface LoginStart {
  /** The provider's authorization URL, to redirect the browser to. */
  url: string;
  /** The sealed transaction, for the cookie the callback reads. */
  transaction: string;
}

export interface LoginResult {
  identity: OidcIdentity;
  /** The ID token's claims, over the userinfo answer's when it was asked (for the role mapping). */
  claims: Record<string, unknown>;
  /** The login was begun with a request for JSON. */
  json: boolean;
}

// Loaded with the first OIDC discovery (at start when OIDC is configured): without OIDC, the server
// never holds openid-client and jose.
let openidClient: Promise<typeof client> | undefined;
const loadClient = () => (openidClient ??= import('openid-client'));

export class OidcLogin {
  readonly redirectUri: string;
  private readonly sealer = new TransactionSealer();
  private discovered: Promise<client.Configuration> | undefined;

  constructor(readonly settings: OidcSettings, private readonly options: { timeoutSec?: number } = {}) {
    this.redirectUri = `${settings.clientUrl}${CALLBACK_PATH}`;
  }

  /**
   * The provider's metadata, discovered once; a discovery that fails is tried again at the next
   * call, so a provider down when troupe starts is found once it is up. bad_gateway while it fails.
   */
  provider(): Promise<client.Configuration> {
    this.discovered ??= this.discover().catch((error: unknown) => {
      this.discovered = undefined;
      throw error;
    });
    return this.discovered;
  }

  private async discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    const client = await loadClient();
    try {
      return await client.discovery(
        new URL(issuer), clientId, clientSecret === undefined ? undefined : { client_secret: clientSecret },
        // client_secret_basic is what a provider assumes of a client registered without saying.
        clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
        // An http issuer is the operator's choice (a provider on the same host or network). The ID
        // token's signature is checked too (against the provider's JWKS): over plain http, TLS does
        // not vouch for the token endpoint's answer.
        {
          execute: [...(new URL(issuer).protocol === 'http:' ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks],
          timeout: this.options.timeoutSec ?? 10,
        },
      );
    } catch (error) {
      throw new AppError('bad_gateway', `OIDC issuer ${issuer} cannot be discovered: ${reason(error, client)}`);
    }
  }

  async begin(json: boolean): Promise<LoginStart> {
    const provider = await this.provider();
    const client = await loadClient();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(provider, {
      redirect_uri: this.redirectUri,
      scope: this.settings.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, transaction: await this.sealer.seal({ state, nonce, codeVerifier, ...(json ? { json } : {}) }) };
  }

  /**
   * `query`: the callback's query string; `sealed`: the transaction cookie. unauthorized for a
   * missing or foreign transaction, a state that is not its own, a provider's refusal or a token
   * that fails its checks; bad_gateway when the provider cannot be reached.
   */
  async complete(query: URLSearchParams, sealed: string | undefined): Promise<LoginResult> {
    const transaction = sealed === undefined ? undefined : await this.sealer.open(sealed);
    if (!transaction) throw new AppError('unauthorized', `no OIDC login in progress, or it expired: begin again at ${LOGIN_PATH}`);
    const state = query.get('state');
    if (state === null || !sameText(state, transaction.state)) throw new AppError('unauthorized', 'the OIDC state does not match the login in progress: begin again');
    const provider = await this.provider();
    const client = await loadClient();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      // The URL the provider was given, whatever address the request came in on (a proxy's).
      tokens = await client.authorizationCodeGrant(provider, new URL(`${this.redirectUri}?${query}`), {
        pkceCodeVerifier: transaction.codeVerifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
      });
    } catch (error) {
      throw failure(error, 'the OIDC login failed', client);
    }
    const claims = tokens.claims();
    if (!claims) throw new AppError('unauthorized', 'the OIDC provider returned no ID token');
    let profile: Record<string, unknown> = claims;
    // Many providers put the email in the userinfo answer only, and groups too: with a role
    // mapping it is always asked, as Dagu does, so that a role never rests on half the claims.
    if ((typeof claims.email !== 'string' || this.settings.roleMapping) && tokens.access_token) {
      try {
        profile = { ...(await client.fetchUserInfo(provider, tokens.access_token, claims.sub)), ...claims };
      } catch (error) {
        throw failure(error, 'the OIDC userinfo request failed', client);
      }
    }
    return { identity: identityOf(claims.sub, profile), claims: profile, json: transaction.json === true };
  }
}

function identityOf(subject: string, profile: Record<string, unknown>): OidcIdentity {
  const text = (key: string) => (typeof profile[key] === 'string' && profile[key] !== '' ? profile[key] as string : undefined);
  const verified = profile.email_verified;
  const displayName = text('preferred_username') ?? text('name');
  return {
    subject,
    ...(text('email') ? { email: text('email')!.toLowerCase() } : {}),
    // Some providers send the flag as a string.
    ...(verified === false || verified === 'false' ? { emailVerified: false } : verified === true || verified === 'true' ? { emailVerified: true } : {}),
    ...(displayName ? { displayName } : {}),
  };
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const UNREACHABLE = new Set(['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON']);

/** A provider that cannot be reached or answers nonsense is bad_gateway; a refusal or failed check, unauthorized. */
function failure(error: unknown, what: string, client: typeof import('openid-client')): AppError {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown }).code;
  if (error instanceof TypeError || (typeof code === 'string' && UNREACHABLE.has(code))) return new AppError('bad_gateway', `${what}: the provider cannot be reached (${reason(error, client)})`);
  return new AppError('unauthorized', `${what}: ${reason(error, client)}`);
}

/** The provider's own words (error, error_description) or the library's, with the network cause. */
function reason(error: unknown, client: typeof import('openid-client')): string {
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    return [error.error, error.error_description].filter(Boolean).join(': ');
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const message = error instanceof Error ? error.message : String(error);
  const detail = cause?.code ?? cause?.message;
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}

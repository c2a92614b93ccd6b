// Who may log in with OIDC: the whitelist of emails and the allowed domains, as Dagu reads them.
import type { OidcSettings } from './settings.ts';

export interface OidcIdentity {
  /** `sub`: with the issuer, the one stable name of the account. */
  subject: string;
  email?: string;
  /** false only when the provider says the address is unproven. */
  emailVerified?: boolean;
  /** `preferred_username`, else `name`. */
  displayName?: string;
}

/**
 * Why `identity` may not log in, or undefined when it may. An email in the whitelist or of an
 * allowed domain is admitted; with neither list set, every account of the issuer is. An address
 * the provider calls unverified never matches a list: anyone could claim it.
 */
export function refusal(identity: OidcIdentity, settings: Pick<OidcSettings, 'whitelist' | 'allowedDomains'>): string | undefined {
  if (settings.whitelist.length === 0 && settings.allowedDomains.length === 0) return undefined;
  const email = identity.email?.toLowerCase();
  if (!email) return 'the identity provider gave no email, and logins are limited to listed emails or domains';
  if (identity.emailVerified === false) return 'the identity provider has not verified this account\'s email';
  if (settings.whitelist.includes(email)) return undefined;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (email.includes('@') && settings.allowedDomains.includes(domain)) return undefined;
  return 'this account\'s email is not in the whitelist nor of an allowed domain';
}

// OIDC login settings: Dagu's `auth.oidc` keys of config.yaml and their TROUPE_AUTH_OIDC_*
// variables (a variable wins over the file), read and checked before anything starts.
import { AppError, type Role } from '../../core/index.ts';
import { readRoleMapping, type OidcRoleMapping } from './role-mapping-settings.ts';
import { flag, mapOf, settingReader, text as textOf, unknownKey, type Fail } from './setting-values.ts';

export interface OidcSettings {
  clientId: string;
  /** Absent: a public client, which proves itself with PKCE only. */
  clientSecret?: string;
  /** troupe's address as the browser reaches it: the redirect URI hangs below it, and a login ends there. */
  clientUrl: string;
  issuer: string;
  scopes: string[];
  /** Emails admitted (lower case); with allowedDomains empty too, every account of the issuer is. */
  whitelist: string[];
  /** Email domains admitted (lower case). */
  allowedDomains: string[];
  /** false: only users created beforehand (by an admin) may log in with OIDC. */
  autoSignup: boolean;
  /** The role of a user created at their first OIDC login; with roleMapping, the role when nothing maps. */
  defaultRole: Role;
  /** Roles from the provider's groups or claims, given at each sign-in; absent: defaultRole, once. */
  roleMapping?: OidcRoleMapping;
}

export const DEFAULT_SCOPES = ['openid', 'profile', 'email'];

/** config.yaml key (Dagu's camelCase; its later snake_case spelling also read) -> variable suffix. */
const KEYS = {
  clientId: ['client_id', 'CLIENT_ID'],
  clientSecret: ['client_secret', 'CLIENT_SECRET'],
  clientUrl: ['client_url', 'CLIENT_URL'],
  issuer: ['issuer', 'ISSUER'],
  scopes: ['scopes', 'SCOPES'],
  whitelist: ['whitelist', 'WHITELIST'],
  allowedDomains: ['allowed_domains', 'ALLOWED_DOMAINS'],
  autoSignup: ['auto_signup', 'AUTO_SIGNUP'],
} as const;
type Key = keyof typeof KEYS;

/**
 * The settings of `auth.oidc` (`section`, the YAML value; undefined when absent) and the
 * environment; undefined when neither names a client id and an issuer (OIDC login is off).
 * A setting present but wrong is a `bad_request` naming the key.
 */
export function readOidcSettings(section: unknown, env: Record<string, string | undefined>): OidcSettings | undefined {
  const fail = (problem: string) => new AppError('bad_request', `auth.oidc: ${problem}`);
  const file = mapOf(section, 'must be a map', fail);
  const value = settingReader(file, env, KEYS);
  const unknown = unknownKey(file, KEYS, ['roleMapping', 'role_mapping']);
  if (unknown !== undefined) throw fail(`unknown key "${unknown}"`);
  const text = (key: Key) => textOf(value(key), key, fail);
  const clientId = text('clientId');
  const issuer = text('issuer');
  if (clientId === undefined && issuer === undefined) return undefined;
  if (clientId === undefined) throw fail('clientId is required with an issuer');
  if (issuer === undefined) throw fail('issuer is required with a clientId');
  const clientUrl = text('clientUrl');
  if (clientUrl === undefined) throw fail('clientUrl (troupe\'s address as browsers reach it, such as https://troupe.example.com) is required');
  for (const [key, url] of [['issuer', issuer], ['clientUrl', clientUrl]] as const) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw fail(`${key} must be an http or https URL, not "${url}"`);
  }
  const scopes = list(value('scopes'), 'scopes', fail) ?? DEFAULT_SCOPES;
  if (!scopes.includes('openid')) throw fail('scopes must include openid');
  return {
    clientId,
    ...(text('clientSecret') !== undefined ? { clientSecret: text('clientSecret') } : {}),
    clientUrl: clientUrl.replace(/\/+$/, ''),
    issuer,
    scopes,
    whitelist: (list(value('whitelist'), 'whitelist', fail) ?? []).map((email) => email.toLowerCase()),
    allowedDomains: (list(value('allowedDomains'), 'allowedDomains', fail) ?? []).map((domain) => domain.toLowerCase().replace(/^@/, '')),
    autoSignup: flag(value('autoSignup'), 'autoSignup', fail) ?? true,
    ...readRoleMapping(file.roleMapping ?? file.role_mapping, env, fail),
  };
}

/** A YAML list, or a comma-separated string (as variables give it). */
function list(raw: unknown, key: string, fail: Fail): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const items = typeof raw === 'string' ? raw.split(',') : raw;
  if (!Array.isArray(items) || items.some((item) => typeof item !== 'string')) throw fail(`${key} must be a list of strings (or one string, comma-separated)`);
  return (items as string[]).map((item) => item.trim()).filter(Boolean);
}

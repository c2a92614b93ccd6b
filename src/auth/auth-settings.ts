// What the configuration reads and checks of auth: the modes, the settings' shape and the OIDC
// section. Kept apart from the modules that sign, hash and limit (jsonwebtoken, argon2, the limiter), so
// that the command's verbs read a configuration without loading them.
import type { LoginLimits } from './login-limiter.ts';
import type { PermissionSwitches } from './roles.ts';

export { readOidcSettings, type OidcSettings } from './oidc/settings.ts';

export type AuthMode = 'none' | 'builtin' | 'oidc';
export const AUTH_MODES: readonly AuthMode[] = ['none', 'builtin', 'oidc'];

export interface AuthSettings {
  /** none (the default), builtin or oidc (config.yaml `auth.mode`). */
  mode?: AuthMode;
  /** Static Basic credentials (`auth.basic`); accepted in every mode, as the admin role. */
  basic?: { username: string; password: string };
  /** A static Bearer token (`auth.token.value`); accepted in every mode, as the admin role. */
  token?: string;
  /** The first admin, created when no user exists (`auth.builtin.admin`). */
  admin?: { username?: string; password?: string };
  /** Signs session tokens (`auth.builtin.token.secret`); generated and kept in the store when absent. */
  tokenSecret?: string;
  /** How long a session token is accepted (`auth.builtin.token.ttl`); 24 h by default. */
  tokenTtlMs?: number;
  /** API paths (below /api/v2) served without credentials; `/health` by default. `/metrics` always is. */
  publicPaths?: string[];
  /** Dagu's `permissions.writeDAGs` / `runDAGs`: both true by default. */
  permissions?: Partial<PermissionSwitches>;
  loginLimits?: LoginLimits;
}

/** Settings as a start or a reload hands them: the mode always named (src/config completes it). */
export type AuthInForce = AuthSettings & { mode: AuthMode };

export { Auth, AUTH_MODES, DEFAULT_PUBLIC_PATHS, DEFAULT_TOKEN_TTL_MS, type AuthInForce, type AuthMode, type AuthSettings } from './auth.ts';
export { Accounts, apiKeyView, MAX_KEY_DESCRIPTION_LENGTH, MAX_KEY_NAME_LENGTH, MAX_USERNAME_LENGTH, type ApiKeyView } from './accounts.ts';
export { MAX_PASSWORD_LENGTH } from './passwords.ts';
export { SESSION_COOKIE, userView, type Identity, type IdentityKind, type SessionToken, type UserView } from './identity.ts';
export { PERMISSIONS, refusal, roleAllows, rolesWith, type Permission, type PermissionSwitches } from './roles.ts';
export { DEFAULT_LOGIN_LIMITS, type LoginLimits } from './login-limiter.ts';
export { API_KEY_PREFIX } from './api-keys.ts';
export { OIDC_PATH, OidcSignIn, openOidcSignIn, readOidcSettings, TRANSACTION_TTL_SEC, type OidcSettings } from './oidc/index.ts';

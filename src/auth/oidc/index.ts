export { refusal as oidcRefusal, type OidcIdentity } from './admission.ts';
export { CALLBACK_PATH, LOGIN_PATH, OIDC_PATH, OidcLogin, type LoginStart } from './oidc-login.ts';
export { OidcSignIn, openOidcSignIn, type SignedIn } from './oidc-sign-in.ts';
export { DEFAULT_SCOPES, readOidcSettings, type OidcSettings } from './settings.ts';
export { TRANSACTION_TTL_SEC } from './transaction.ts';

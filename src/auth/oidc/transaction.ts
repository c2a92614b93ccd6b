// What a login in progress must remember between the redirect to the provider and the callback
// (state, nonce, PKCE verifier), sealed into a short-lived cookie the browser carries: nothing is
// kept on the server, and the browser can neither read nor alter it (encrypted and authenticated).
import { randomBytes } from 'node:crypto';

export interface LoginTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Whether the caller asked for JSON ({token, expiresAt, user}) instead of the redirect to clientUrl. */
  json?: boolean;
}

/** A login must come back within this long. */
export const TRANSACTION_TTL_SEC = 600;

// Loaded with the first login begun: a server without OIDC never holds it.
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

export class TransactionSealer {
  // A key of this process only: a login begun before a restart must begin again, and no key is
  // configured or stored for it.
  private readonly key = randomBytes(32);

  async seal(transaction: LoginTransaction): Promise<string> {
    const { EncryptJWT } = await loadJose();
    return new EncryptJWT({ ...transaction })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt()
      .setExpirationTime(`${TRANSACTION_TTL_SEC}s`)
      .encrypt(this.key);
  }

  /** undefined for a cookie this process did not seal, one altered, or one expired. */
  async open(sealed: string): Promise<LoginTransaction | undefined> {
    const { jwtDecrypt } = await loadJose();
    try {
      const { payload } = await jwtDecrypt(sealed, this.key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      const { state, nonce, codeVerifier, json } = payload;
      if (typeof state !== 'string' || typeof nonce !== 'string' || typeof codeVerifier !== 'string') return undefined;
      return { state, nonce, codeVerifier, ...(json === true ? { json } : {}) };
    } catch {
      return undefined;
    }
  }
}

// Session tokens: HS256 JWTs (jose) naming a user and the token version they were issued at.
import type { Clock } from '../core/index.ts';
import type { SessionToken } from './identity.ts';

const ISSUER = 'troupe';

// Loaded with the first session issued or checked: a server that no one signs in to never holds it.
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

export interface SessionClaims {
  userId: string;
  tokenVersion: number;
}

export class Sessions {
  private readonly key: Uint8Array;

  constructor(secret: string, private readonly ttlMs: number, private readonly clock: Clock) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(claims: SessionClaims): Promise<SessionToken> {
    const nowMs = this.clock.now();
    const expiresMs = nowMs + this.ttlMs;
    const { SignJWT } = await loadJose();
    const token = await new SignJWT({ ver: claims.tokenVersion })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(claims.userId)
      .setIssuedAt(Math.floor(nowMs / 1000))
      .setExpirationTime(Math.floor(expiresMs / 1000))
      .sign(this.key);
    return { token, expiresAt: new Date(Math.floor(expiresMs / 1000) * 1000).toISOString() };
  }

  /** The claims of a valid, unexpired token of ours; undefined for anything else. */
  async verify(token: string): Promise<SessionClaims | undefined> {
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, currentDate: new Date(this.clock.now()) });
      if (typeof payload.sub !== 'string' || typeof payload.ver !== 'number') return undefined;
      return { userId: payload.sub, tokenVersion: payload.ver };
    } catch {
      return undefined;
    }
  }
}

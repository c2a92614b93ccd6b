// Session tokens: HS256 JWTs (jsonwebtoken) naming a user and the token version they were issued at.
//
// Signed and checked synchronously: an HMAC is microseconds of work, and a check that waits on
// nothing lets a WebSocket handshake carrying a session be answered within the carrier's own
// callback (uws-sockets.ts tells why that matters).
import { createRequire } from 'node:module';
import type { Clock } from '../core/index.ts';
import type { SessionToken } from './identity.ts';

const ISSUER = 'troupe';

// Loaded with the first session issued or checked, and synchronously (a require, not an import):
// a server that no one signs in to never holds it.
type Jwt = typeof import('jsonwebtoken');
let jwt: Jwt | undefined;
const loadJwt = (): Jwt => (jwt ??= createRequire(import.meta.url)('jsonwebtoken') as Jwt);

export interface SessionClaims {
  userId: string;
  tokenVersion: number;
}

export class Sessions {
  private readonly key: Buffer;

  constructor(secret: string, private readonly ttlMs: number, private readonly clock: Clock) {
    this.key = Buffer.from(secret, 'utf8');
  }

  async issue(claims: SessionClaims): Promise<SessionToken> {
    const nowMs = this.clock.now();
    const expiresS = Math.floor((nowMs + this.ttlMs) / 1000);
    const token = loadJwt().sign({ ver: claims.tokenVersion, iat: Math.floor(nowMs / 1000), exp: expiresS }, this.key, {
      algorithm: 'HS256',
      issuer: ISSUER,
      subject: claims.userId,
      noTimestamp: true,
    });
    return { token, expiresAt: new Date(expiresS * 1000).toISOString() };
  }

  /** The claims of a valid, unexpired token of ours; undefined for anything else. */
  verify(token: string): SessionClaims | undefined {
    try {
      const payload = loadJwt().verify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, clockTimestamp: Math.floor(this.clock.now() / 1000) });
      if (typeof payload !== 'object' || typeof payload.sub !== 'string' || typeof payload.ver !== 'number') return undefined;
      return { userId: payload.sub, tokenVersion: payload.ver };
    } catch {
      return undefined;
    }
  }
}

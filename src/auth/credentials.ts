// Reading the credentials a request carries: the Authorization header, else the session cookie.
// Pure: deciding whether they are valid is the authenticator's.
import { SESSION_COOKIE } from './identity.ts';

export type Credentials =
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'cookie'; token: string }
  | { kind: 'malformed' }
  | { kind: 'none' };

export function readCredentials(headers: Record<string, string | undefined>): Credentials {
  const authorization = headers.authorization;
  if (authorization !== undefined && authorization.trim() !== '') {
    const [scheme, ...rest] = authorization.trim().split(/\s+/);
    const value = rest.join(' ');
    if (!value) return { kind: 'malformed' };
    if (scheme.toLowerCase() === 'bearer') return { kind: 'bearer', token: value };
    if (scheme.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon < 0 ? { kind: 'malformed' } : { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    return { kind: 'malformed' };
  }
  const token = cookieValue(headers.cookie, SESSION_COOKIE);
  return token ? { kind: 'cookie', token } : { kind: 'none' };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

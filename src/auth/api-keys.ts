// API keys: 256 random bits behind a recognisable prefix, stored only as their SHA-256.
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'troupe_';
/** How much of a key is kept in the clear to tell keys apart: the prefix and 5 characters. */
const SHOWN_LENGTH = API_KEY_PREFIX.length + 5;

export function newApiKey(): { key: string; keyPrefix: string; keyHash: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, keyPrefix: key.slice(0, SHOWN_LENGTH), keyHash: apiKeyHash(key) };
}

export function apiKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

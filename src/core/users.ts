// Accounts of builtin authentication: users, API keys and the secrets sessions are signed with,
// and the port that stores them. Holds no credential in the clear: passwords and keys as hashes.

export const ROLES = ['admin', 'manager', 'operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: unknown): value is Role => typeof value === 'string' && (ROLES as readonly string[]).includes(value);

export interface UserRecord {
  id: string;
  username: string;
  role: Role;
  /** An argon2id PHC string; absent for a user who signs in only through OIDC. */
  passwordHash?: string;
  /**
   * Moves on each password change or reset: a session token carries the version it was issued
   * at, and one issued before the change no longer authenticates.
   */
  tokenVersion: number;
  /** How the user was created: by an admin (or the first admin from the config) or at an OIDC sign-in. */
  source: 'builtin' | 'oidc';
  createdAt: string;
  updatedAt: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  description: string;
  role: Role;
  /** The key's first characters, shown to tell keys apart; the rest exists only as `keyHash`. */
  keyPrefix: string;
  /** SHA-256 of the whole key, hex: keys are 256 random bits, so a fast hash cannot be searched. */
  keyHash: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
}

/**
 * Users and API keys, each write durable when its promise settles. Usernames and key names are
 * unique: a write that would repeat one rejects with already_exists, decided inside the write's
 * transaction.
 */
export interface UserStore {
  users(): UserRecord[];
  user(id: string): UserRecord | undefined;
  userByName(username: string): UserRecord | undefined;
  /** Rejects already_exists when the username is taken. */
  createUser(user: UserRecord): Promise<void>;
  /** Replaces the stored user of `user.id`; rejects not_found, or already_exists on a taken username. */
  updateUser(user: UserRecord): Promise<void>;
  /** Whether a user was removed. */
  deleteUser(id: string): Promise<boolean>;
  apiKeys(): ApiKeyRecord[];
  apiKey(id: string): ApiKeyRecord | undefined;
  apiKeyByHash(keyHash: string): ApiKeyRecord | undefined;
  /** Rejects already_exists when the name is taken. */
  createApiKey(key: ApiKeyRecord): Promise<void>;
  /** Rejects not_found, or already_exists on a taken name. */
  updateApiKey(key: ApiKeyRecord): Promise<void>;
  deleteApiKey(id: string): Promise<boolean>;
  /** A secret the server generated and keeps (the session signing key), by name. */
  secret(name: string): string | undefined;
  setSecret(name: string, value: string): Promise<void>;
}

// UserStore on LMDB, in the run store's environment: users and API keys with their unique-name
// indexes, and the secrets the server generated. Writes are rare (an admin's action, an OIDC
// sign-in): each commits synchronously, its uniqueness checked inside its transaction.
import type { Database, RootDatabase } from 'lmdb';
import { AppError, type ApiKeyRecord, type UserRecord, type UserStore } from '../core/index.ts';
import { keys } from './keys.ts';
import { storageError } from './storage-full.ts';

type Key = Array<string | number>;

/** LMDB refuses keys past 1978 bytes; a name from a request may be anything. */
const MAX_LOOKUP_LENGTH = 512;

export class LmdbUserStore implements UserStore {
  private readonly usersDb: Database<UserRecord, Key>;
  private readonly usernames: Database<string, Key>;
  private readonly keysDb: Database<ApiKeyRecord, Key>;
  private readonly keyHashes: Database<string, Key>;
  private readonly meta: Database<string, Key>;

  constructor(private readonly env: RootDatabase, private readonly path: string) {
    this.usersDb = env.openDB({ name: 'users' });
    this.usernames = env.openDB({ name: 'users-by-name' });
    this.keysDb = env.openDB({ name: 'api-keys' });
    this.keyHashes = env.openDB({ name: 'api-keys-by-hash' });
    this.meta = env.openDB({ name: 'auth-meta' });
  }

  users(): UserRecord[] {
    return [...this.usersDb.getRange()].map(({ value }) => value).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  user(id: string): UserRecord | undefined {
    return id.length > MAX_LOOKUP_LENGTH ? undefined : this.usersDb.get(keys.user(id));
  }

  userByName(username: string): UserRecord | undefined {
    if (username.length > MAX_LOOKUP_LENGTH) return undefined;
    const id = this.usernames.get(keys.username(username));
    return id === undefined ? undefined : this.user(id);
  }

  createUser(user: UserRecord): Promise<void> {
    return this.write(() => {
      if (this.usernames.get(keys.username(user.username)) !== undefined) throw new AppError('already_exists', `user ${user.username} already exists`);
      void this.usersDb.put(keys.user(user.id), user);
      void this.usernames.put(keys.username(user.username), user.id);
    });
  }

  updateUser(user: UserRecord): Promise<void> {
    return this.write(() => {
      const stored = this.usersDb.get(keys.user(user.id));
      if (!stored) throw new AppError('not_found', 'user not found');
      if (stored.username !== user.username) {
        if (this.usernames.get(keys.username(user.username)) !== undefined) throw new AppError('already_exists', `user ${user.username} already exists`);
        void this.usernames.remove(keys.username(stored.username));
        void this.usernames.put(keys.username(user.username), user.id);
      }
      void this.usersDb.put(keys.user(user.id), user);
    });
  }

  deleteUser(id: string): Promise<boolean> {
    return this.write(() => {
      const stored = this.user(id);
      if (!stored) return false;
      void this.usersDb.remove(keys.user(id));
      void this.usernames.remove(keys.username(stored.username));
      return true;
    });
  }

  apiKeys(): ApiKeyRecord[] {
    return [...this.keysDb.getRange()].map(({ value }) => value).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  apiKey(id: string): ApiKeyRecord | undefined {
    return id.length > MAX_LOOKUP_LENGTH ? undefined : this.keysDb.get(keys.apiKey(id));
  }

  apiKeyByHash(keyHash: string): ApiKeyRecord | undefined {
    if (keyHash.length > MAX_LOOKUP_LENGTH) return undefined;
    const id = this.keyHashes.get(keys.apiKeyHash(keyHash));
    return id === undefined ? undefined : this.apiKey(id);
  }

  createApiKey(key: ApiKeyRecord): Promise<void> {
    return this.write(() => {
      if (this.apiKeys().some((other) => other.name === key.name)) throw new AppError('already_exists', `an API key named ${key.name} already exists`);
      void this.keysDb.put(keys.apiKey(key.id), key);
      void this.keyHashes.put(keys.apiKeyHash(key.keyHash), key.id);
    });
  }

  updateApiKey(key: ApiKeyRecord): Promise<void> {
    return this.write(() => {
      const stored = this.keysDb.get(keys.apiKey(key.id));
      if (!stored) throw new AppError('not_found', 'API key not found');
      if (stored.name !== key.name && this.apiKeys().some((other) => other.name === key.name)) throw new AppError('already_exists', `an API key named ${key.name} already exists`);
      void this.keysDb.put(keys.apiKey(key.id), key);
    });
  }

  deleteApiKey(id: string): Promise<boolean> {
    return this.write(() => {
      const stored = this.apiKey(id);
      if (!stored) return false;
      void this.keysDb.remove(keys.apiKey(id));
      void this.keyHashes.remove(keys.apiKeyHash(stored.keyHash));
      return true;
    });
  }

  secret(name: string): string | undefined {
    return this.meta.get(keys.authSecret(name));
  }

  setSecret(name: string, value: string): Promise<void> {
    return this.write(() => void this.meta.put(keys.authSecret(name), value));
  }

  private write<T>(change: () => T): Promise<T> {
    try {
      return Promise.resolve(this.env.transactionSync(change));
    } catch (error) {
      return Promise.reject(storageError(error, 'the users, API keys and sign-in secrets', this.path));
    }
  }
}

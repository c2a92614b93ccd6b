// User and API key management (the admin's routes, and a user's own password): the rules, over the
// UserStore. Answers views without hashes; an API key's secret is returned once, at creation.
import { randomUUID } from 'node:crypto';
import { AppError, isRole, type ApiKeyRecord, type Clock, type Role, type UserRecord, type UserStore } from '../core/index.ts';
import { newApiKey } from './api-keys.ts';
import { userView, type Identity, type UserView } from './identity.ts';
import { checkNewPassword, hashPassword, passwordMatches } from './passwords.ts';

export const MAX_USERNAME_LENGTH = 64;
export const MAX_KEY_NAME_LENGTH = 100;
export const MAX_KEY_DESCRIPTION_LENGTH = 500;

/** Counts a check of a username's password against the sign-in limits (login-limiter.ts). */
export interface PasswordAttempts {
  /** Throws too_many_requests past a limit. */
  attempt(username: string): Promise<void>;
  succeeded(username: string): Promise<void>;
}

export interface ApiKeyView {
  id: string;
  name: string;
  description: string;
  role: Role;
  keyPrefix: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
}

export function apiKeyView(key: ApiKeyRecord): ApiKeyView {
  const { keyHash: _hash, ...view } = key;
  return view;
}

function checkUsername(username: string): void {
  // Control characters would let a name forge lines in a log or a terminal.
  if (username.length < 1 || username.length > MAX_USERNAME_LENGTH || /[\u0000-\u001f\u007f:]/.test(username) || username.trim() !== username) {
    throw new AppError('bad_request', `username must be 1 to ${MAX_USERNAME_LENGTH} characters, without a colon, control characters or surrounding spaces`);
  }
}

function checkRole(role: unknown): Role {
  if (!isRole(role)) throw new AppError('bad_request', 'Invalid role');
  return role;
}

export class Accounts {
  constructor(private readonly store: UserStore, private readonly clock: Clock) {}

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  listUsers(): UserView[] {
    return this.store.users().map(userView);
  }

  user(id: string): UserRecord {
    const user = this.store.user(id);
    if (!user) throw new AppError('not_found', 'user not found');
    return user;
  }

  userByName(username: string): UserRecord | undefined {
    return this.store.userByName(username);
  }

  async createUser(request: { username: string; password: string; role: unknown }, source: UserRecord['source'] = 'builtin'): Promise<UserView> {
    checkUsername(request.username);
    const role = checkRole(request.role);
    checkNewPassword(request.password);
    const now = this.now();
    const user: UserRecord = {
      id: randomUUID(), username: request.username, role, passwordHash: await hashPassword(request.password),
      tokenVersion: 0, source, createdAt: now, updatedAt: now,
    };
    await this.store.createUser(user);
    return userView(user);
  }

  /** A user who signs in elsewhere (OIDC): stored without a password, created at the first sign-in. */
  async findOrCreate(username: string, role: Role): Promise<UserRecord> {
    const known = this.store.userByName(username);
    if (known) return known;
    checkUsername(username);
    const now = this.now();
    const user: UserRecord = { id: randomUUID(), username, role: checkRole(role), tokenVersion: 0, source: 'oidc', createdAt: now, updatedAt: now };
    try {
      await this.store.createUser(user);
      return user;
    } catch (error) {
      // Two first sign-ins at once: the one that lost finds the other's user.
      const created = error instanceof AppError && error.code === 'already_exists' ? this.store.userByName(username) : undefined;
      if (created) return created;
      throw error;
    }
  }

  async updateUser(actor: Identity, id: string, change: { username?: string; role?: unknown }): Promise<UserView> {
    const user = this.user(id);
    const next: UserRecord = { ...user, updatedAt: this.now() };
    if (change.username !== undefined) {
      checkUsername(change.username);
      next.username = change.username;
    }
    if (change.role !== undefined) {
      next.role = checkRole(change.role);
      if (user.role === 'admin' && next.role !== 'admin') this.keepAnAdmin(actor, user, 'demote');
    }
    await this.store.updateUser(next);
    return userView(next);
  }

  /**
   * The role an identity provider gives at a sign-in (OIDC role mapping). The provider decides:
   * neither the actor's rules nor the last admin's of updateUser apply.
   */
  async assignRole(id: string, role: Role): Promise<UserRecord> {
    const next: UserRecord = { ...this.user(id), role: checkRole(role), updatedAt: this.now() };
    await this.store.updateUser(next);
    return next;
  }

  async deleteUser(actor: Identity, id: string): Promise<void> {
    const user = this.user(id);
    if (actor.userId === id) throw new AppError('forbidden', 'cannot delete yourself');
    if (user.role === 'admin') this.keepAnAdmin(actor, user, 'delete');
    await this.store.deleteUser(id);
  }

  private keepAnAdmin(actor: Identity, user: UserRecord, action: string): void {
    if (actor.userId === user.id) throw new AppError('forbidden', `cannot ${action} yourself`);
    const admins = this.store.users().filter((other) => other.role === 'admin');
    if (admins.length <= 1) throw new AppError('forbidden', `cannot ${action} the last admin`);
  }

  /** Sets a new password; every session token issued before stops authenticating. */
  async setPassword(id: string, password: string): Promise<void> {
    checkNewPassword(password);
    const user = this.user(id);
    await this.store.updateUser({ ...user, passwordHash: await hashPassword(password), tokenVersion: user.tokenVersion + 1, updatedAt: this.now() });
  }

  /**
   * `counted`: the sign-in limits, which count the check of the current password as an attempt
   * (whoever holds a session must not be able to guess the password it was opened with).
   */
  async changeOwnPassword(actor: Identity, currentPassword: string, newPassword: string, counted: PasswordAttempts): Promise<void> {
    const user = actor.userId === undefined ? undefined : this.store.user(actor.userId);
    if (!user) throw new AppError('bad_request', 'only a stored user has a password to change; these credentials belong to none');
    await counted.attempt(user.username);
    if (!(await passwordMatches(currentPassword, user.passwordHash))) throw new AppError('unauthorized', 'current password is wrong');
    await counted.succeeded(user.username);
    await this.setPassword(user.id, newPassword);
  }

  listApiKeys(): ApiKeyView[] {
    return this.store.apiKeys().map(apiKeyView);
  }

  apiKey(id: string): ApiKeyView {
    const key = this.store.apiKey(id);
    if (!key) throw new AppError('not_found', 'API key not found');
    return apiKeyView(key);
  }

  async createApiKey(actor: Identity, request: { name: string; description?: string; role: unknown }): Promise<{ apiKey: ApiKeyView; key: string }> {
    const name = checkKeyName(request.name);
    const description = checkKeyDescription(request.description ?? '');
    const role = checkRole(request.role);
    const { key, keyPrefix, keyHash } = newApiKey();
    const now = this.now();
    const record: ApiKeyRecord = {
      id: randomUUID(), name, description, role, keyPrefix, keyHash,
      createdBy: actor.userId ?? actor.username, createdAt: now, updatedAt: now, lastUsedAt: null,
    };
    await this.store.createApiKey(record);
    return { apiKey: apiKeyView(record), key };
  }

  async updateApiKey(id: string, change: { name?: string; description?: string; role?: unknown }): Promise<ApiKeyView> {
    const stored = this.store.apiKey(id);
    if (!stored) throw new AppError('not_found', 'API key not found');
    const next: ApiKeyRecord = { ...stored, updatedAt: this.now() };
    if (change.name !== undefined) next.name = checkKeyName(change.name);
    if (change.description !== undefined) next.description = checkKeyDescription(change.description);
    if (change.role !== undefined) next.role = checkRole(change.role);
    await this.store.updateApiKey(next);
    return apiKeyView(next);
  }

  async deleteApiKey(id: string): Promise<void> {
    if (!(await this.store.deleteApiKey(id))) throw new AppError('not_found', 'API key not found');
  }
}

function checkKeyName(name: string): string {
  if (name.trim().length < 1 || name.length > MAX_KEY_NAME_LENGTH) throw new AppError('bad_request', `name must be 1 to ${MAX_KEY_NAME_LENGTH} characters`);
  return name;
}

function checkKeyDescription(description: string): string {
  if (description.length > MAX_KEY_DESCRIPTION_LENGTH) throw new AppError('bad_request', `description must be at most ${MAX_KEY_DESCRIPTION_LENGTH} characters`);
  return description;
}

// Password hashing (argon2id, @node-rs/argon2, off the main thread) and the rule a new password
// must meet. Messages never contain the password.
import { AppError } from '../core/index.ts';

// Loaded with the first password checked or set: a server without password users never holds it
// (its native library and bindings cost the process several megabytes).
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
const loadArgon2 = () => (argon2 ??= import('@node-rs/argon2'));
const hash = async (password: string) => (await loadArgon2()).hash(password);
const verify = async (against: string, password: string) => (await loadArgon2()).verify(against, password);

export const MIN_PASSWORD_LENGTH = 8;
/** argon2 hashes any length; a bound keeps a request from making it hash megabytes. */
export const MAX_PASSWORD_LENGTH = 1024;

export function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new AppError('bad_request', `Password does not meet security requirements: ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
}

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/**
 * Whether `password` matches `passwordHash`. Without a hash (an unknown user, an OIDC-only user) a
 * dummy hash is checked all the same, so the answer takes as long either way: timing tells no one
 * which usernames exist.
 */
export async function passwordMatches(password: string, passwordHash: string | undefined): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const against = passwordHash ?? await dummyHash();
  try {
    const matches = await verify(against, password);
    return matches && passwordHash !== undefined;
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= hash('troupe: no such user'));

// Stored users' passwords already verified, for Basic credentials: a client that sends Basic on
// every request would otherwise pay an argon2 verify (tens of milliseconds and 19 MiB) each time,
// and a few such clients would hold the server's CPU. Only a keyed digest of each password is kept
// (the key is this process's own, never stored), and an entry holds only while the user's password
// hash is the one it was verified against: a changed or reset password drops it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Users remembered at most; the one verified longest ago is dropped first. */
const KEPT = 1000;

export class VerifiedPasswords {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, { digest: Buffer; passwordHash: string }>();

  /** Whether `password` was verified for `username` while its stored hash was `passwordHash`. */
  matches(username: string, password: string, passwordHash: string | undefined): boolean {
    const entry = this.entries.get(username);
    if (!entry || passwordHash === undefined || entry.passwordHash !== passwordHash) return false;
    return timingSafeEqual(entry.digest, this.digest(username, password));
  }

  remember(username: string, password: string, passwordHash: string): void {
    this.entries.delete(username);
    if (this.entries.size >= KEPT) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(username, { digest: this.digest(username, password), passwordHash });
  }

  private digest(username: string, password: string): Buffer {
    return createHmac('sha256', this.key).update(username).update('\0').update(password).digest();
  }
}

// Sign-in attempts counted per username and per client address (rate-limiter-flexible, in memory):
// past either limit, attempts are refused without checking the password until the window has
// passed. An attempt is counted before its password is checked, so that attempts made at once
// count as many as the same attempts made one after another; a success gives its count back.
import { createHmac, randomBytes } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../core/index.ts';

export interface LoginLimits {
  /** Failures of one username within the window before its sign-ins are refused. */
  perUser: number;
  /** Failures from one address, whatever the usernames. */
  perAddress: number;
  windowSec: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perAddress: 50, windowSec: 15 * 60 };

/**
 * Counts kept at most, of each kind. Usernames and addresses are whatever a client sends, so each
 * is counted in one of this many slots (a keyed digest of it): the counts take the same memory
 * however many names and addresses are tried. Names sharing a slot share its count; the digest's
 * key is this process's own, so no one can choose names that share a given user's slot.
 */
export const LIMITER_SLOTS = 1 << 14;

export class LoginLimiter {
  private readonly byUser: RateLimiterMemory;
  private readonly byAddress: RateLimiterMemory;
  private readonly key = randomBytes(32);

  constructor(private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS, private readonly slots = LIMITER_SLOTS) {
    this.byUser = new RateLimiterMemory({ keyPrefix: 'user', points: limits.perUser, duration: limits.windowSec });
    this.byAddress = new RateLimiterMemory({ keyPrefix: 'address', points: limits.perAddress, duration: limits.windowSec });
  }

  /** Throws too_many_requests while the username or the address is over its limit; counts nothing. */
  async check(username: string, address: string | undefined): Promise<void> {
    const [user, from] = await Promise.all([this.byUser.get(this.slot('user', username)), address ? this.byAddress.get(this.slot('address', address)) : null]);
    const waits: number[] = [];
    if (user && user.consumedPoints >= this.limits.perUser) waits.push(user.msBeforeNext);
    if (from && from.consumedPoints >= this.limits.perAddress) waits.push(from.msBeforeNext);
    if (waits.length > 0) throw refusal(Math.max(...waits));
  }

  /**
   * Counts an attempt for the username and the address before its password is checked: throws
   * too_many_requests, counting nothing more, when either is past its limit. An attempt refused for
   * its username does not count against the address: someone else's locked name must not lock out
   * the address it is shared from.
   */
  async attempt(username: string, address: string | undefined): Promise<void> {
    const from = address === undefined ? undefined : this.slot('address', address);
    if (from !== undefined) await consumeOrRefuse(this.byAddress, from);
    try {
      await consumeOrRefuse(this.byUser, this.slot('user', username));
    } catch (error) {
      if (from !== undefined) await this.byAddress.reward(from);
      throw error;
    }
  }

  /** The attempt succeeded: the username's count is cleared and the address's point given back. */
  async succeeded(username: string, address: string | undefined): Promise<void> {
    await Promise.all([this.byUser.delete(this.slot('user', username)), address === undefined ? undefined : this.byAddress.reward(this.slot('address', address))]);
  }

  /** How many counts are kept now, of each kind (never more than LIMITER_SLOTS). */
  counts(): { users: number; addresses: number } {
    return { users: this.byUser.dump().storage.length, addresses: this.byAddress.dump().storage.length };
  }

  private slot(kind: string, text: string): string {
    return (createHmac('sha256', this.key).update(kind).update('\0').update(text).digest().readUInt32BE(0) % this.slots).toString(16);
  }
}

async function consumeOrRefuse(limiter: RateLimiterMemory, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (rejection) {
    // consume rejects with the count once it is past the limit; anything else is a real failure.
    if (rejection instanceof RateLimiterRes) throw refusal(rejection.msBeforeNext);
    throw rejection;
  }
}

function refusal(msBeforeNext: number): AppError {
  const retryAfterSec = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AppError('too_many_requests', `Too many failed sign-in attempts; try again in ${retryAfterSec} s`, { retryAfterSec });
}

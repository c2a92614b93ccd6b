// Failed sign-ins counted per username and per client address (rate-limiter-flexible, in
// memory): past either limit, attempts are refused without checking the password until the
// window has passed. A success clears the username's count.
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { AppError } from '../core/index.ts';

export interface LoginLimits {
  /** Failures of one username within the window before its sign-ins are refused. */
  perUser: number;
  /** Failures from one address, whatever the usernames. */
  perAddress: number;
  windowSec: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perAddress: 50, windowSec: 15 * 60 };

export class LoginLimiter {
  private readonly byUser: RateLimiterMemory;
  private readonly byAddress: RateLimiterMemory;

  constructor(private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS) {
    this.byUser = new RateLimiterMemory({ keyPrefix: 'user', points: limits.perUser, duration: limits.windowSec });
    this.byAddress = new RateLimiterMemory({ keyPrefix: 'address', points: limits.perAddress, duration: limits.windowSec });
  }

  /** Throws too_many_requests while the username or the address is over its limit. */
  async check(username: string, address: string | undefined): Promise<void> {
    const [user, from] = await Promise.all([this.byUser.get(username), address ? this.byAddress.get(address) : null]);
    const waits: number[] = [];
    if (user && user.consumedPoints >= this.limits.perUser) waits.push(user.msBeforeNext);
    if (from && from.consumedPoints >= this.limits.perAddress) waits.push(from.msBeforeNext);
    if (waits.length === 0) return;
    const retryAfterSec = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    throw new AppError('too_many_requests', `Too many failed sign-in attempts; try again in ${retryAfterSec} s`, { retryAfterSec });
  }

  async failed(username: string, address: string | undefined): Promise<void> {
    // consume rejects once over the limit: that is the state check() reads, not an error here.
    await Promise.all([
      this.byUser.consume(username).catch(() => undefined),
      address ? this.byAddress.consume(address).catch(() => undefined) : undefined,
    ]);
  }

  async succeeded(username: string): Promise<void> {
    await this.byUser.delete(username);
  }
}

// Sign-in attempts counted per username and per client address (rate-limiter-flexible, in memory):
// past either limit, attempts are refused without checking the password until the window has
// passed. An attempt is counted before its password is checked, so that attempts made at once
// count as many as the same attempts made one after another; a success gives its count back.
import { createHmac, randomBytes } from 'node:crypto';
import type { RateLimiterMemory } from 'rate-limiter-flexible';
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
 * Counts kept at most, of each kind. Usernames and addresses are whatever a client sends, so they
 * are counted in slots picked by a keyed digest: the counts take the same memory however many
 * names and addresses are tried (all taken, the two kinds hold 13 MB, measured).
 */
export const LIMITER_SLOTS = 1 << 14;

/**
 * Slots each name is counted in; it is over its limit when every one of them is (a count-min
 * sketch). A name can share one slot with others, which then raise its count, but seldom all: so
 * other names' failures do not lock a user out. The digest's key is this process's own, so no one
 * can choose names that share a given user's slots.
 */
const SLOTS_PER_NAME = 2;

// Loaded with the first sign-in attempt: a server no one signs in to never holds it.
let limiters: Promise<typeof import('rate-limiter-flexible')> | undefined;
const loadLimiters = () => (limiters ??= import('rate-limiter-flexible'));

/** One kind of count (usernames or addresses) in a fixed number of slots. */
class SlotCounts {
  private counter: RateLimiterMemory | undefined;

  constructor(
    private readonly kind: string,
    private readonly limit: number,
    private readonly windowSec: number,
    private readonly slots: number,
    private readonly key: Buffer,
  ) {}

  private async limiter(): Promise<RateLimiterMemory> {
    if (!this.counter) {
      const { RateLimiterMemory } = await loadLimiters();
      this.counter ??= new RateLimiterMemory({ keyPrefix: this.kind, points: this.limit, duration: this.windowSec });
    }
    return this.counter;
  }

  /** Milliseconds until `name` is under its limit again; undefined while it is under. */
  async wait(name: string): Promise<number | undefined> {
    const limiter = await this.limiter();
    const counts = await Promise.all(this.slotsOf(name).map((slot) => limiter.get(slot)));
    if (counts.some((count) => count === null || count.consumedPoints < this.limit)) return undefined;
    return Math.min(...counts.map((count) => count!.msBeforeNext));
  }

  /** Counts one attempt of `name`; past its limit, counts nothing and answers how long to wait. */
  async count(name: string): Promise<number | undefined> {
    const slots = this.slotsOf(name);
    // penalty adds at once, whatever the count (consume would reject per slot).
    const limiter = await this.limiter();
    const counts = await Promise.all(slots.map((slot) => limiter.penalty(slot)));
    if (counts.some((count) => count.consumedPoints <= this.limit)) return undefined;
    await this.giveBack(name);
    return Math.min(...counts.map((count) => count.msBeforeNext));
  }

  async giveBack(name: string): Promise<void> {
    const limiter = await this.limiter();
    await Promise.all(this.slotsOf(name).map((slot) => limiter.reward(slot)));
  }

  async clear(name: string): Promise<void> {
    const limiter = await this.limiter();
    await Promise.all(this.slotsOf(name).map((slot) => limiter.delete(slot)));
  }

  size(): number {
    return this.counter?.dump().storage.length ?? 0;
  }

  private slotsOf(name: string): string[] {
    const digest = createHmac('sha256', this.key).update(this.kind).update('\0').update(name).digest();
    const slots = Array.from({ length: SLOTS_PER_NAME }, (_, i) => (digest.readUInt32BE(4 * i) % this.slots).toString(16));
    // Twice the same slot would count the attempt twice.
    return [...new Set(slots)];
  }
}

export class LoginLimiter {
  private readonly byUser: SlotCounts;
  private readonly byAddress: SlotCounts;

  constructor(limits: LoginLimits = DEFAULT_LOGIN_LIMITS, slots = LIMITER_SLOTS) {
    const key = randomBytes(32);
    this.byUser = new SlotCounts('user', limits.perUser, limits.windowSec, slots, key);
    this.byAddress = new SlotCounts('address', limits.perAddress, limits.windowSec, slots, key);
  }

  /** Throws too_many_requests while the username or the address is over its limit; counts nothing. */
  async check(username: string, address: string | undefined): Promise<void> {
    const waits = await Promise.all([this.byUser.wait(username), address === undefined ? undefined : this.byAddress.wait(address)]);
    const over = waits.filter((wait) => wait !== undefined);
    if (over.length > 0) throw refusal(Math.max(...over));
  }

  /**
   * Counts an attempt for the username and the address before its password is checked: throws
   * too_many_requests, counting nothing, when either is past its limit. An attempt refused for its
   * username does not count against the address: someone else's locked name must not lock out the
   * address it is shared from.
   */
  async attempt(username: string, address: string | undefined): Promise<void> {
    if (address !== undefined) {
      const wait = await this.byAddress.count(address);
      if (wait !== undefined) throw refusal(wait);
    }
    const wait = await this.byUser.count(username);
    if (wait === undefined) return;
    if (address !== undefined) await this.byAddress.giveBack(address);
    throw refusal(wait);
  }

  /** The attempt succeeded: the username's count is cleared and the address's point given back. */
  async succeeded(username: string, address: string | undefined): Promise<void> {
    await Promise.all([this.byUser.clear(username), address === undefined ? undefined : this.byAddress.giveBack(address)]);
  }

  /** How many slots hold a count now, of each kind (never more than LIMITER_SLOTS). */
  counts(): { users: number; addresses: number } {
    return { users: this.byUser.size(), addresses: this.byAddress.size() };
  }
}

function refusal(msBeforeNext: number): AppError {
  const retryAfterSec = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AppError('too_many_requests', `Too many failed sign-in attempts; try again in ${retryAfterSec} s`, { retryAfterSec });
}

// Time is injected so that decision logic and machines can be tested without sleeping.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Timers, injected beside the clock: tests move time with their own and never sleep. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Node's timers; they keep no process alive on their own. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

// Time is injected so that decision logic and machines can be tested without sleeping.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

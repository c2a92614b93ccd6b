// The `duration` query of the resource history: Go-style durations as Dagu takes them (30m, 1h,
// 1h30m, 90s), parsed by parse-duration.
import parse from 'parse-duration';

/** Milliseconds, or a problem to report as bad_request. */
export function parseDuration(text: string): { ms: number } | { problem: string } {
  // A bare number would be read as milliseconds, which no client means: a unit is required.
  const ms = /[a-z]/i.test(text) ? parse(text) : null;
  if (ms === null || ms === undefined || !Number.isFinite(ms)) {
    return { problem: `duration ${JSON.stringify(text)} is not a duration such as 30m, 1h or 1h30m` };
  }
  if (ms <= 0) return { problem: `duration ${JSON.stringify(text)} must be longer than zero` };
  return { ms };
}

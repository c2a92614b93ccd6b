// The Redis URL of distributed dispatch: redis:// or rediss:// (TLS), with an optional password.
// Its credentials are for the connection alone: what is shown of it (logs, errors) masks them.

/** The URL checked; throws when it is no redis:// or rediss:// URL (the message never quotes a password). */
export function checkRedisUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('the Redis URL must be redis://[user:password@]host[:port][/db] or rediss://... for TLS');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error(`the Redis URL must start with redis:// or rediss://, not ${parsed.protocol}//`);
  if (parsed.hostname === '') throw new Error('the Redis URL names no host');
  return parsed;
}

/** The URL as it may be shown: user and password replaced by `***`. */
export function maskedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return parsed.href;
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace('//', '//***@');
  } catch {
    return '(an unreadable Redis URL)';
  }
}

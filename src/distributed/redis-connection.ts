// One way to open a Redis connection for distributed dispatch, from the URL (redis:// or rediss://,
// credentials included). ioredis reconnects by itself, forever, with a growing pause.
import { Redis } from 'ioredis';
import { checkRedisUrl } from '../core/index.ts';

export interface ConnectionOptions {
  /**
   * true: a command waits while Redis is away and goes once it is back (in order); false: it fails
   * at once (the record stream's reads, which are tried again, and which closing must not wait for).
   */
  waitForConnection: boolean;
}

export function redisConnection(url: string, options: ConnectionOptions): Redis {
  const parsed = checkRedisUrl(url);
  return new Redis(parsed.href, {
    // BullMQ asks for it on the connections its workers block on; a command that waits has no retry count.
    maxRetriesPerRequest: null,
    enableOfflineQueue: options.waitForConnection,
    retryStrategy: (times) => Math.min(100 * times, 2_000),
    ...(parsed.protocol === 'rediss:' ? { tls: { servername: parsed.hostname } } : {}),
  });
}

/** `promise`, or nothing after `ms`: what waits on Redis does not hold a drain or a close forever. */
export function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise.then(() => undefined, () => undefined), new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); })])
    .finally(() => clearTimeout(timer));
}

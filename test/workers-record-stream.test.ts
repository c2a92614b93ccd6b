// Records carried from a worker to the server on a real Redis Stream: applied in order, each once,
// across a failed apply, a server that read and stopped before acknowledging, an attempt that is
// no longer current, and a Redis that was away while the worker appended.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RECORD_STREAM, RecordInbox, RecordOutbox, type InboxOptions, type StreamItem } from '../src/workers/record-stream.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { waitUntil } from './helpers.ts';

const missing = redisMissing();
// In CI a missing redis-server fails the suite; elsewhere it may be skipped.
const skip = missing !== undefined && !process.env.CI ? missing : false;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function redisServer(options: { port?: number } = {}): Promise<RedisServer> {
  const server = await startRedis(options);
  cleanups.push(() => server.stop());
  return server;
}

/** A connection as a worker holds one: commands wait for Redis rather than fail. */
function waiting(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
  redis.on('error', () => {});
  cleanups.push(() => redis.disconnect());
  return redis;
}

/** The server's side, applying into `applied` (a store's stand-in: what it applied, per attempt, in order). */
function inbox(url: string, applied: Map<string, StreamItem[]>, overrides: Partial<InboxOptions> = {}): RecordInbox {
  const connection = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: null, retryStrategy: () => 50 });
  connection.on('error', () => {});
  const reader = new RecordInbox(connection, {
    async apply(items) {
      for (const item of items) applied.set(item.attempt, [...applied.get(item.attempt) ?? [], item]);
    },
    appliedSeq: (attempt) => applied.get(attempt)?.at(-1)?.seq ?? 0,
    isCurrent: () => true,
    blockMs: 100,
    ...overrides,
  });
  cleanups.push(() => reader.close());
  return reader;
}

const seqs = (items: StreamItem[] | undefined) => (items ?? []).map((item) => `${item.seq}:${JSON.parse(item.payload).n}`);

test('items are applied in order, per attempt numbered from 1, then acknowledged and deleted', { skip }, async () => {
  const redis = await redisServer();
  const outbox = new RecordOutbox(waiting(redis.url));
  for (let n = 1; n <= 3; n++) await outbox.append('a1', 'record', { n });
  await outbox.append('b1', 'log', { n: 10 });
  const applied = new Map<string, StreamItem[]>();
  inbox(redis.url, applied).start();
  await waitUntil(() => applied.get('a1')?.length === 3 && applied.has('b1'));
  assert.deepEqual(seqs(applied.get('a1')), ['1:1', '2:2', '3:3']);
  assert.deepEqual(applied.get('b1')!.map((item) => [item.seq, item.kind]), [[1, 'log']]);
  const probe = waiting(redis.url);
  assert.ok(await waitUntil(async () => (await probe.xlen(RECORD_STREAM)) === 0), 'the applied entries were not deleted');
});

test('items appended faster than Redis answers share entries, and come out one by one, in order', { skip }, async () => {
  const redis = await redisServer();
  const outbox = new RecordOutbox(waiting(redis.url));
  // One tick: the first goes alone, the rest wait for its answer and go together.
  const sent = await Promise.all(Array.from({ length: 50 }, (_, index) => outbox.append(index % 2 ? 'a1' : 'b1', 'record', { n: index })));
  assert.deepEqual(sent.filter((item) => item.attempt === 'a1').map((item) => item.seq), Array.from({ length: 25 }, (_, index) => index + 1));
  const probe = waiting(redis.url);
  const entries = await probe.xlen(RECORD_STREAM);
  assert.ok(entries >= 2 && entries < 50, `50 items in ${entries} entries`);
  const applied = new Map<string, StreamItem[]>();
  inbox(redis.url, applied).start();
  await waitUntil(() => applied.get('a1')?.length === 25 && applied.get('b1')?.length === 25);
  assert.deepEqual(applied.get('a1')!.map((item) => JSON.parse(item.payload).n), Array.from({ length: 25 }, (_, index) => 2 * index + 1));
  assert.deepEqual(applied.get('b1')!.map((item) => item.seq), Array.from({ length: 25 }, (_, index) => index + 1));
  assert.ok(await waitUntil(async () => (await probe.xlen(RECORD_STREAM)) === 0), 'the applied entries were not deleted');
});

test('an entry with a malformed item is told, and its well-formed items applied', { skip }, async () => {
  const redis = await redisServer();
  const probe = waiting(redis.url);
  await probe.xadd(RECORD_STREAM, '*', 'a', 'a1', 's', '1', 'k', 'log', 'p', '{"n":1}', 'a', 'a1', 's', 'x', 'k', 'log', 'p', '{}', 'a', 'a1', 's', '2', 'k', 'log', 'p', '{"n":2}');
  const applied = new Map<string, StreamItem[]>();
  const errors: string[] = [];
  inbox(redis.url, applied, { onError: (error) => errors.push(error.message) }).start();
  await waitUntil(() => applied.get('a1')?.length === 2);
  assert.deepEqual(seqs(applied.get('a1')), ['1:1', '2:2']);
  assert.match(errors.join('\n'), /malformed entry/);
});

test('a batch whose apply failed is read again and applied once; a server that read and stopped has its entries read again, the applied ones skipped', { skip }, async () => {
  const redis = await redisServer();
  const outbox = new RecordOutbox(waiting(redis.url));
  const applied = new Map<string, StreamItem[]>();
  let failures = 1;
  const errors: string[] = [];
  const first = inbox(redis.url, applied, {
    async apply(items) {
      if (failures-- > 0) throw new Error('disk full');
      for (const item of items) applied.set(item.attempt, [...applied.get(item.attempt) ?? [], item]);
    },
    onError: (error) => errors.push(error.message),
  });
  await outbox.append('a1', 'record', { n: 1 });
  await outbox.append('a1', 'record', { n: 2 });
  first.start();
  await waitUntil(() => applied.get('a1')?.length === 2);
  assert.deepEqual(seqs(applied.get('a1')), ['1:1', '2:2']);
  assert.deepEqual(errors, ['disk full']);
  await first.close();

  // A server that read entries (they are pending for the group) and stopped before acknowledging:
  // one of them it had applied, one not.
  await outbox.append('a1', 'record', { n: 3 });
  await outbox.append('a1', 'record', { n: 4 });
  const crashed = waiting(redis.url);
  await crashed.call('XREADGROUP', 'GROUP', 'troupe-server', 'server', 'COUNT', 10, 'STREAMS', RECORD_STREAM, '>');
  applied.set('a1', [...applied.get('a1')!, { attempt: 'a1', seq: 3, kind: 'record', payload: '{"n":3}' }]);
  inbox(redis.url, applied).start();
  await waitUntil(() => applied.get('a1')?.length === 4);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(seqs(applied.get('a1')), ['1:1', '2:2', '3:3', '4:4']);
  assert.equal(await crashed.xlen(RECORD_STREAM), 0);
});

test('items of an attempt that is no longer current are dropped, and acknowledged', { skip }, async () => {
  const redis = await redisServer();
  const outbox = new RecordOutbox(waiting(redis.url));
  await outbox.append('old', 'record', { n: 1 });
  await outbox.append('new', 'record', { n: 2 });
  const applied = new Map<string, StreamItem[]>();
  inbox(redis.url, applied, { isCurrent: (attempt) => attempt !== 'old' }).start();
  await waitUntil(() => applied.has('new'));
  const probe = waiting(redis.url);
  assert.ok(await waitUntil(async () => (await probe.xlen(RECORD_STREAM)) === 0));
  assert.equal(applied.has('old'), false);
});

test('items appended while Redis is away wait, in order, and are applied once it is back', { skip }, async () => {
  const first = await redisServer();
  const outbox = new RecordOutbox(waiting(first.url));
  await outbox.append('a1', 'record', { n: 1 });
  const applied = new Map<string, StreamItem[]>();
  const errors: string[] = [];
  inbox(first.url, applied, { onError: (error) => errors.push(error.message) }).start();
  await waitUntil(() => applied.get('a1')?.length === 1);
  await first.stop();
  const sent = [outbox.append('a1', 'record', { n: 2 }), outbox.append('a1', 'record', { n: 3 })];
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(applied.get('a1')!.length, 1);
  // Started again on the same port, without the data of before (no persistence here).
  await redisServer({ port: first.port });
  await Promise.all(sent);
  assert.ok(await waitUntil(() => applied.get('a1')?.length === 3), `not applied; errors: ${errors.join('; ')}`);
  assert.deepEqual(seqs(applied.get('a1')), ['1:1', '2:2', '3:3']);
});

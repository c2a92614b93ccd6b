// Runs handed to workers' own queues on a real Redis (BullMQ): a worker takes only its own, never
// more than its limit at once; the same attempt handed twice runs once; a run not taken yet can be
// taken back; a worker that drains takes nothing new and lets its runs end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RunJobs, RunJobTaker } from '../src/workers/run-jobs.ts';
import { workerIdProblem } from '../src/core/index.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { waitUntil } from './helpers.ts';

const missing = redisMissing();
// In CI a missing redis-server fails the suite; elsewhere it may be skipped.
const skip = missing !== undefined && !process.env.CI ? missing : false;

let redis: RedisServer;
const connections: Redis[] = [];
const connection = () => {
  const made = new Redis(redis.url, { maxRetriesPerRequest: null });
  connections.push(made);
  return made;
};
before(async () => {
  if (!skip) redis = await startRedis();
});
after(async () => {
  for (const made of connections) made.disconnect();
  await redis?.stop();
});

type Payload = { spec: string };

test('a worker runs the runs handed to it, never more than its limit at once, and no other worker\'s', { skip }, async () => {
  const jobs = new RunJobs<Payload>(connection());
  const ran: string[] = [];
  const release: Array<() => void> = [];
  let active = 0;
  let most = 0;
  const taker = new RunJobTaker<Payload>(connection(), {
    workerId: 'w1', maxActiveRuns: 2,
    async run(payload, attempt) {
      active++;
      most = Math.max(most, active);
      ran.push(`${attempt} ${payload.spec}`);
      await new Promise<void>((resolve) => release.push(resolve));
      active--;
    },
  });
  const other: string[] = [];
  const otherTaker = new RunJobTaker<Payload>(connection(), { workerId: 'w2', maxActiveRuns: 8, run: async (_payload, attempt) => { other.push(attempt); } });
  taker.start();
  otherTaker.start();
  for (const n of [1, 2, 3, 4]) await jobs.hand('w1', `dag\u0000run${n}\u0000a1`, { spec: `steps ${n}` });
  // The same attempt again: nothing more.
  await jobs.hand('w1', 'dag\u0000run1\u0000a1', { spec: 'steps 1' });
  await waitUntil(() => ran.length === 2);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(ran.length, 2, 'more runs than the limit at once');
  while (ran.length < 4 || release.length > 0) {
    release.shift()?.();
    await waitUntil(() => release.length > 0 || ran.length === 4, 2_000);
  }
  await waitUntil(() => active === 0);
  assert.equal(most, 2);
  assert.deepEqual(ran.sort(), [1, 2, 3, 4].map((n) => `dag\u0000run${n}\u0000a1 steps ${n}`));
  assert.deepEqual(other, []);
  await taker.drain();
  await otherTaker.drain();
  await jobs.close();
});

test('a run not taken yet is taken back; a draining worker takes nothing new and lets its runs end', { skip }, async () => {
  const jobs = new RunJobs<Payload>(connection());
  await jobs.hand('w3', 'd\u0000r1\u0000a', { spec: 'one' });
  assert.equal(await jobs.withdraw('w3', 'd\u0000r1\u0000a'), true);
  assert.equal(await jobs.withdraw('w3', 'd\u0000r1\u0000a'), false);
  let finish!: () => void;
  const ran: string[] = [];
  const taker = new RunJobTaker<Payload>(connection(), {
    workerId: 'w3', maxActiveRuns: 1,
    run: async (payload) => { ran.push(payload.spec); await new Promise<void>((resolve) => { finish = resolve; }); },
  });
  taker.start();
  await jobs.hand('w3', 'd\u0000r2\u0000a', { spec: 'two' });
  await waitUntil(() => ran.length === 1);
  assert.equal(await jobs.withdraw('w3', 'd\u0000r2\u0000a'), false, 'a run under way was taken back');
  const drained = taker.drain();
  await jobs.hand('w3', 'd\u0000r3\u0000a', { spec: 'three' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  finish();
  await drained;
  assert.deepEqual(ran, ['two']);
  // Still waiting for a worker: the server may hand it to another.
  assert.equal(await jobs.withdraw('w3', 'd\u0000r3\u0000a'), true);
  await jobs.close();
});

test('worker ids name queues: letters, digits, dots, dashes, underscores', () => {
  assert.equal(workerIdProblem('gpu-box_1.eu'), undefined);
  for (const bad of ['', 'a:b', '-x', 'a b', 'x'.repeat(65)]) assert.match(workerIdProblem(bad) ?? '', /worker id/, bad);
});

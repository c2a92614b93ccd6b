// Writes told in issue order whatever order their promises settle in (commit-order.ts). The
// store's own case (lmdb-js settling the first write after idle some 200 writes late, under load)
// is driven by test/large-dag.test.ts on a loaded machine; here the settling order is chosen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommitOrder } from './commit-order.ts';

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((yes, no) => { resolve = yes; reject = no; });
  return { promise, resolve, reject };
}

test('a write that settles late is told before the later writes that settled first, once', async () => {
  const order = new CommitOrder();
  const told: string[] = [];
  const writes = ['a', 'b', 'c'].map((name) => {
    const write = deferred();
    return { write, followed: order.follow(write.promise, () => told.push(name)) };
  });
  writes[2].write.resolve();
  await writes[2].followed;
  assert.deepEqual(told, ['a', 'b', 'c'], 'c committed, so a and b before it did');
  writes[0].write.resolve();
  writes[1].write.resolve();
  await Promise.all(writes.map(({ followed }) => followed));
  assert.deepEqual(told, ['a', 'b', 'c'], 'their own settling tells nothing again');
});

test('a write that fails is never told, and the writes after it are', async () => {
  const order = new CommitOrder();
  const told: string[] = [];
  const failing = deferred();
  const failed = order.follow(failing.promise, () => told.push('failed'));
  const next = deferred();
  const followed = order.follow(next.promise, () => told.push('next'));
  failing.reject(new Error('the disk is full'));
  await assert.rejects(failed, /the disk is full/);
  next.resolve();
  await followed;
  assert.deepEqual(told, ['next']);
});

test('writes in the order they settle are told as they settle, over many turns of the queue', async () => {
  const order = new CommitOrder();
  const told: number[] = [];
  for (let index = 0; index < 3000; index++) await order.follow(Promise.resolve(), () => told.push(index));
  assert.equal(told.length, 3000);
  assert.ok(told.every((value, index) => value === index));
  const late = deferred();
  const lateFollowed = order.follow(late.promise, () => told.push(-1));
  order.flush();
  assert.equal(told.at(-1), -1, 'a flush tells what still waits');
  late.resolve();
  await lateFollowed;
  assert.equal(told.filter((value) => value === -1).length, 1);
});

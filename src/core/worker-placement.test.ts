import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickWorker, type WorkerView } from './worker-placement.ts';

const worker = (id: string, labels: Record<string, string>, totalPollers: number, busyPollers = 0, healthStatus: WorkerView['healthStatus'] = 'healthy'): WorkerView =>
  ({ id, labels, totalPollers, busyPollers, runningTasks: [], lastHeartbeatAt: '2026-11-29T04:00:00.000Z', healthStatus });

test('a worker carrying every pair of the selector, exactly; any worker for an empty selector', () => {
  const workers = [worker('cpu', { zone: 'eu' }, 2), worker('gpu', { gpu: 'true', zone: 'eu' }, 2)];
  assert.deepEqual(pickWorker({ gpu: 'true' }, workers), { kind: 'worker', id: 'gpu' });
  assert.deepEqual(pickWorker({ gpu: 'true', zone: 'eu' }, workers), { kind: 'worker', id: 'gpu' });
  assert.deepEqual(pickWorker({ gpu: 'TRUE' }, workers), { kind: 'no-worker', selector: { gpu: 'TRUE' } });
  assert.deepEqual(pickWorker({ gpu: 'true', arch: 'arm64' }, workers), { kind: 'no-worker', selector: { gpu: 'true', arch: 'arm64' } });
  assert.deepEqual(pickWorker({}, workers), { kind: 'worker', id: 'cpu' });
  assert.deepEqual(pickWorker({}, []), { kind: 'no-worker', selector: {} });
});

test('never past a worker\'s limit, counting the runs the server placed on it when it says; the least busy first', () => {
  const workers = [worker('a', { pool: 'x' }, 2, 1), worker('b', { pool: 'x' }, 4, 1), worker('c', { pool: 'x' }, 1, 1)];
  // Without the server's count, each worker's own.
  assert.deepEqual(pickWorker({ pool: 'x' }, workers), { kind: 'worker', id: 'b' });
  // With it, that count alone: c's heartbeat still shows a run that has ended.
  assert.deepEqual(pickWorker({ pool: 'x' }, workers, new Map([['a', 1], ['b', 4]])), { kind: 'worker', id: 'c' });
  assert.deepEqual(pickWorker({ pool: 'x' }, workers, new Map([['a', 2], ['b', 4], ['c', 1]])), { kind: 'all-busy', workers: ['a', 'b', 'c'] });
  // The same state, the same choice: equal load, the one with more room, then by id.
  assert.deepEqual(pickWorker({}, [worker('z', {}, 2), worker('y', {}, 2), worker('x', {}, 4)]), { kind: 'worker', id: 'x' });
  assert.deepEqual(pickWorker({}, [worker('z', {}, 2), worker('y', {}, 2)]), { kind: 'worker', id: 'y' });
});

test('an unhealthy worker (no heartbeat for 15 s) takes nothing; one in warning still does', () => {
  assert.deepEqual(pickWorker({}, [worker('gone', {}, 8, 0, 'unhealthy')]), { kind: 'no-worker', selector: {} });
  assert.deepEqual(pickWorker({}, [worker('late', {}, 8, 0, 'warning')]), { kind: 'worker', id: 'late' });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionError, decideAdmission } from './admission.ts';
import type { Slots } from './slots.ts';

test('singleton conflicts and maxActiveRuns give the codes of docs/api.md', () => {
  const base = { name: 'd', maxActiveRuns: 1, singleton: false, active: 0, kind: 'start' as const };
  assert.equal(admissionError(base), undefined);
  assert.equal(admissionError({ ...base, active: 1, singleton: true })?.code, 'already_running');
  assert.equal(admissionError({ ...base, active: 1, singleton: true, kind: 'inline' })?.code, 'max_run_reached');
  assert.equal(admissionError({ ...base, active: 1 })?.code, 'max_run_reached');
  assert.equal(admissionError({ ...base, active: 5, maxActiveRuns: -1 }), undefined);
  assert.equal(admissionError({ ...base, active: 1, maxActiveRuns: 2 }), undefined);
});

test('a start for a worker goes to one with room at once; it waits in its queue behind a run waiting there, or when no worker has room', () => {
  const worker = (id: string, labels: Record<string, string>, totalPollers: number) => ({
    id, labels, totalPollers, busyPollers: 0, runningTasks: [], lastHeartbeatAt: new Date().toISOString(), healthStatus: 'healthy' as const,
  });
  const slots: Slots = {
    active: new Map(), reserved: new Map(), starting: new Map(), queueOf: new Map(), byQueue: new Map(), queued: new Map(),
    queueLimits: new Map(), isSuspended: () => false, isStored: () => false, paused: false, placed: new Map(), admitting: 'open',
    workers: () => [worker('cpu', { pool: 'cpu' }, 4), worker('gpu', { pool: 'gpu' }, 1)],
  };
  const ask = { kind: 'start' as const, name: 'd', dagRunId: 'r1', queue: 'd', maxActiveRuns: -1, workerSelector: { pool: 'gpu' } };
  const first = decideAdmission(slots, ask);
  assert.equal(first.answer.outcome, 'admitted');
  assert.equal(first.answer.outcome === 'admitted' && first.answer.slot.worker, 'gpu');
  // Its one slot taken: the next waits for it, and so does one behind it, though a slot may free meanwhile.
  const busy = { ...slots, ...first.next };
  const second = decideAdmission(busy, { ...ask, dagRunId: 'r2' });
  assert.deepEqual(second.answer, { outcome: 'queued', queue: 'd' });
  const behind = decideAdmission({ ...slots, ...second.next }, { ...ask, dagRunId: 'r3' });
  assert.equal(behind.answer.outcome, 'queued');
  // A suspended DAG's start waits, as an enqueued run of it does.
  assert.equal(decideAdmission({ ...slots, isSuspended: () => true }, { ...ask, fileName: 'd.yaml' }).answer.outcome, 'queued');
});

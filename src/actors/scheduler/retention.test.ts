import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus, isoTime, type RunRecord } from '../../core/index.ts';
import { expiredRunTrees, retentionCutoff } from './retention.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25);

function run(name: string, dagRunId: string, ageDays: number, extra: Partial<RunRecord> = {}): RunRecord {
  const createdAtMs = NOW - ageDays * DAY;
  return {
    name, dagRunId, attemptId: 'a1', rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Succeeded, queuedAt: '', startedAt: isoTime(createdAtMs), finishedAt: isoTime(createdAtMs + 1000), log: '', params: '',
    nodes: [], createdAtMs, ...extra,
  };
}

function subRun(parent: RunRecord, name: string, dagRunId: string, extra: Partial<RunRecord> = {}): RunRecord {
  return run(name, dagRunId, (NOW - parent.createdAtMs) / DAY, {
    rootDAGRunName: parent.rootDAGRunName, rootDAGRunId: parent.rootDAGRunId, parentDAGRunName: parent.name, parentDAGRunId: parent.dagRunId, ...extra,
  });
}

const ids = (trees: RunRecord[][]) => trees.map((tree) => tree.map((record) => record.dagRunId));
const lookupIn = (records: RunRecord[]) => (name: string, dagRunId: string) => records.find((r) => r.name === name && r.dagRunId === dagRunId);

test('retention counts whole days back from now; a negative retention keeps history forever', () => {
  assert.equal(retentionCutoff(NOW, 30), NOW - 30 * DAY);
  // Zero days: every finished run goes, once it has been over for a minute.
  assert.equal(retentionCutoff(NOW, 0), NOW - 60_000);
  assert.equal(retentionCutoff(NOW, -1), undefined);
});

test('finished root runs older than the cutoff expire; newer, active and queued runs stay', () => {
  const runs = [
    run('d', 'old', 40),
    run('d', 'oldFailed', 35, { status: RunStatus.Failed }),
    run('d', 'oldRunning', 40, { status: RunStatus.Running, finishedAt: '' }),
    run('d', 'oldQueued', 40, { status: RunStatus.Queued, finishedAt: '', startedAt: '' }),
    run('d', 'recent', 2),
    // Created long ago but finished within the retention: what counts is when it last changed.
    run('d', 'longRunning', 40, { finishedAt: isoTime(NOW - 1 * DAY) }),
  ];
  assert.deepEqual(ids(expiredRunTrees(runs, NOW - 30 * DAY, lookupIn(runs))), [['old'], ['oldFailed']]);
});

test('an expired root takes its sub DAG runs, deepest first; a sub run is never chosen on its own', () => {
  const root = run('parent', 'p1', 40);
  const child = subRun(root, 'child', 'c1');
  const grandchild = subRun(child, 'grandchild', 'g1');
  const rootWithChildren = { ...root, children: { c1: 'child' } };
  const childWithChildren = { ...child, children: { g1: 'grandchild' } };
  const all = [rootWithChildren, childWithChildren, grandchild];
  assert.deepEqual(ids(expiredRunTrees(all, NOW - 30 * DAY, lookupIn(all))), [['g1', 'c1', 'p1']]);
  // The sub runs themselves, offered as candidates (they share the index), are not roots.
  assert.deepEqual(ids(expiredRunTrees([childWithChildren, grandchild], NOW - 30 * DAY, lookupIn(all))), []);
});

test('a tree with a sub DAG run still active is kept whole', () => {
  const root = run('parent', 'p1', 40, { children: { c1: 'child' } });
  const child = subRun(root, 'child', 'c1', { status: RunStatus.Running, finishedAt: '' });
  assert.deepEqual(ids(expiredRunTrees([root, child], NOW - 30 * DAY, lookupIn([root, child]))), []);
});

test('a run named in children that belongs to another root is not removed with this one', () => {
  const root = run('parent', 'p1', 40, { children: { c1: 'child', gone: 'child' } });
  const foreign = run('child', 'c1', 40, { rootDAGRunName: 'other', rootDAGRunId: 'o1', parentDAGRunName: 'other', parentDAGRunId: 'o1' });
  assert.deepEqual(ids(expiredRunTrees([root], NOW - 30 * DAY, lookupIn([root, foreign]))), [['p1']]);
});

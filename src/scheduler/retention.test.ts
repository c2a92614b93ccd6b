import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus, isFinalRunStatus, isoTime, type RunRecord } from '../core/index.ts';
import { RetentionSweeper, expiredRunTrees, retentionCutoff, type RetentionStore } from './retention.ts';

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

/** The sweeper's view of a store, over an array: what `remover` removes leaves it (a run not finished stays). */
function storeOf(records: RunRecord[]): RetentionStore {
  const get = lookupIn(records);
  return {
    runNames: () => [...new Set(records.map((record) => record.name))],
    // Oldest first, after the cursor (ages here are distinct), a page at a time.
    runsCreatedBefore: (name, beforeMs, limit, after) => records
      .filter((r) => r.name === name && r.createdAtMs < beforeMs && (after === undefined || r.createdAtMs > after.createdAtMs))
      .sort((a, b) => a.createdAtMs - b.createdAtMs).slice(0, limit),
    get, newestRun: () => undefined,
    remover: () => ({
      removeRuns: async (chosen) => {
        let removed = 0;
        for (const record of chosen) {
          const index = records.indexOf(get(record.name, record.dagRunId)!);
          if (index >= 0 && isFinalRunStatus(records[index].status)) {
            records.splice(index, 1);
            removed++;
          }
        }
        return removed;
      },
    }),
  };
}

test('a cleanup asked for: its retention has no minimum, a dry run removes nothing, a name limits it, active runs stay', async () => {
  const parent = run('d', 'old', 10, { children: { oldSub: 'leaf' } });
  const records = [
    parent, subRun(parent, 'leaf', 'oldSub'),
    // Finished a second ago: the sweep's minute keeps it, a cleanup of 0 days does not.
    run('d', 'justNow', 2000 / DAY),
    run('d', 'running', 9, { status: RunStatus.Running, finishedAt: '' }),
    run('e', 'other', 10),
  ];
  const sweeper = new RetentionSweeper({ store: storeOf(records), definitions: { loadDag: async () => ({}) as never }, clock: { now: () => NOW } });
  const dry = await sweeper.cleanup({ name: 'd', retentionDays: 0, dryRun: true });
  assert.deepEqual(dry, { dagRuns: [{ name: 'd', dagRunId: 'old' }, { name: 'd', dagRunId: 'justNow' }], removed: 0 });
  assert.equal(records.length, 5);
  assert.deepEqual(await sweeper.cleanup({ name: 'd', retentionDays: 5 }), { dagRuns: [{ name: 'd', dagRunId: 'old' }], removed: 2 });
  assert.deepEqual(await sweeper.cleanup({ retentionDays: 0 }), { dagRuns: [{ name: 'd', dagRunId: 'justNow' }, { name: 'e', dagRunId: 'other' }], removed: 2 });
  assert.deepEqual(records.map((record) => record.dagRunId), ['running']);
});

// Listings of runs from the index databases: a filter picks the index whose range holds its
// matches (a name's runs, a status's runs, a time window), newest first, and each match is read as
// its summary row alone, never with its nodes. A page ends at `limit` and resumes after a position.
import type { Database } from 'lmdb';
import type { ListPosition, RunFilter, RunStatus, RunSummaryRow, SummaryPage } from '../core/index.ts';
import { keys } from './keys.ts';

type Key = Array<string | number>;

export interface RunIndexes {
  byTime: Database<null, Key>;
  byName: Database<null, Key>;
  byStatus: Database<null, Key>;
  /** The summary row of a run, from a cache of recent writes or the store. */
  summary: (name: string, dagRunId: string) => RunSummaryRow | undefined;
  /** The names that have stored runs (one seek each). */
  runNames: () => string[];
}

interface Candidate extends ListPosition {}

/**
 * The index range that holds every match of `filter`, newest first, from `after` (exclusive) on:
 * a name's runs when a name is given, else a status's runs, else the time window.
 */
function candidates(indexes: RunIndexes, filter: RunFilter, after: ListPosition | undefined): Iterable<Candidate> {
  const fromMs = filter.fromMs ?? 0;
  const toMs = filter.toMs ?? Number.MAX_SAFE_INTEGER;
  if (filter.dagRunId !== undefined) return runsWithId(indexes, filter.dagRunId, filter.name, after).filter(({ createdAtMs }) => createdAtMs >= fromMs && createdAtMs <= toMs);
  if (filter.name !== undefined && filter.status !== undefined) return nameAndStatus(indexes, filter.name, filter.status, fromMs, toMs, after);
  if (filter.name !== undefined) {
    const name = filter.name;
    const range = keys.byNameBetween(name, fromMs, toMs);
    // A position of another name (a cursor reused with another filter) starts at the window's top.
    const start = after && after.name === name ? keys.byName(name, after.createdAtMs, after.dagRunId) : range.start;
    return indexes.byName.getKeys({ ...range, start }).map((key) => {
      const [, createdAtMs, dagRunId] = key as [string, number, string];
      return { createdAtMs, name, dagRunId };
    });
  }
  if (filter.status !== undefined) {
    const status = filter.status;
    const range = keys.byStatusBetween(status, fromMs, toMs);
    const start = after ? keys.byStatus(status, after.createdAtMs, after.name, after.dagRunId) : range.start;
    return indexes.byStatus.getKeys({ ...range, start }).map((key) => {
      const [, createdAtMs, name, dagRunId] = key as [RunStatus, number, string, string];
      return { createdAtMs, name, dagRunId };
    });
  }
  const range = keys.byTimeNewestFirst(fromMs, toMs);
  const start = after ? keys.byTime(after.createdAtMs, after.name, after.dagRunId) : range.start;
  return indexes.byTime.getKeys({ ...range, start }).map((key) => {
    const [createdAtMs, name, dagRunId] = key as [number, string, string];
    return { createdAtMs, name, dagRunId };
  });
}

/** Newest first: creation time, then name, then id, each descending (the order of every listing). */
const newestFirst = (a: ListPosition, b: ListPosition) =>
  b.createdAtMs - a.createdAtMs || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0) || (a.dagRunId < b.dagRunId ? 1 : a.dagRunId > b.dagRunId ? -1 : 0);

/**
 * A run id names at most one run per DAG name: a read of each name's row (one seek per name),
 * instead of the whole time index searched for the id.
 */
function runsWithId(indexes: RunIndexes, dagRunId: string, name: string | undefined, after: ListPosition | undefined): Candidate[] {
  const found: Candidate[] = [];
  for (const runName of name === undefined ? indexes.runNames() : [name]) {
    const row = indexes.summary(runName, dagRunId);
    if (row) found.push({ createdAtMs: row.createdAtMs, name: runName, dagRunId });
  }
  return found.sort(newestFirst).filter((candidate) => !after || newestFirst(after, candidate) > 0);
}

/** The first key of a reverse range, or the second when the first is `skip` (a resumed-from position). */
function firstBelow(db: Database<null, Key>, start: Key, end: Key, skip?: Key): Key | undefined {
  for (const key of db.getKeys({ start, end, reverse: true, limit: 2 })) {
    if (skip && (key as Key).every((part, index) => part === skip[index]) && (key as Key).length === skip.length) continue;
    return key as Key;
  }
  return undefined;
}

/**
 * The runs of a name in a status, newest first: the two indexes are walked in step (each seek
 * skips to the other's position), so a rare status among a name's many runs, or a name among a
 * status's many runs, costs the seeks between matches, not a read of every run of either.
 */
function* nameAndStatus(indexes: RunIndexes, name: string, status: RunStatus, fromMs: number, toMs: number, after: ListPosition | undefined): Generator<Candidate> {
  const nameEnd = [name, fromMs];
  const statusEnd = [status, fromMs];
  // The next run of the name is at or below `start`, below it when `skip` is that very key.
  let start: Key = after && after.name === name ? keys.byName(name, after.createdAtMs, after.dagRunId) : [name, toMs, '\uffff'];
  let skip: Key | undefined = after && after.name === name ? start : undefined;
  for (;;) {
    const ofName = firstBelow(indexes.byName, start, nameEnd, skip);
    if (!ofName) return;
    const [, createdAtMs, dagRunId] = ofName as [string, number, string];
    const ofStatus = firstBelow(indexes.byStatus, keys.byStatus(status, createdAtMs, name, dagRunId), statusEnd);
    if (!ofStatus) return;
    const [, statusMs, statusName, statusId] = ofStatus as [RunStatus, number, string, string];
    if (statusMs === createdAtMs && statusName === name && statusId === dagRunId) {
      yield { createdAtMs, name, dagRunId };
      start = ofName;
      skip = ofName;
    } else if (statusMs === createdAtMs && statusName === name) {
      // The status's next run of this name at the same time: the name's walk resumes there.
      start = keys.byName(name, statusMs, statusId);
      skip = undefined;
    } else {
      // No run of the name in the status between the two: at the same time (another name sorts
      // first) the walk goes on below every run at that time (a prefix key sorts before every
      // key it begins), else from the status run's time down.
      start = statusMs === createdAtMs ? [name, statusMs] : [name, statusMs, '\uffff'];
      skip = undefined;
    }
  }
}

const samePosition = (a: ListPosition, b: ListPosition) => a.createdAtMs === b.createdAtMs && a.name === b.name && a.dagRunId === b.dagRunId;

/**
 * The runs that match `filter`, newest first: all of them, or at most `limit` after `after` with
 * the position to resume from when more follow. Only the matches' summary rows are read (and those
 * of runs the index cannot tell apart: sub DAG runs, another status inside a name).
 */
export function listSummaries(indexes: RunIndexes, filter: RunFilter, page?: { limit: number; after?: ListPosition }): SummaryPage {
  const runs: RunSummaryRow[] = [];
  const after = page?.after;
  for (const candidate of candidates(indexes, filter, after)) {
    // Reverse ranges start at their start key inclusive: the resumed-from run is skipped.
    if (after && samePosition(candidate, after)) continue;
    if (filter.dagRunId !== undefined && candidate.dagRunId !== filter.dagRunId) continue;
    const row = indexes.summary(candidate.name, candidate.dagRunId);
    if (!row) continue;
    if (!filter.includeSubRuns && row.parentDAGRunId !== '') continue;
    if (filter.status !== undefined && row.status !== filter.status) continue;
    if (page && runs.length >= page.limit) {
      const last = runs[runs.length - 1];
      return { runs, next: { createdAtMs: last.createdAtMs, name: last.name, dagRunId: last.dagRunId } };
    }
    runs.push(row);
  }
  return { runs };
}

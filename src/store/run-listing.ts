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
}

interface Candidate extends ListPosition {}

/**
 * The index range that holds every match of `filter`, newest first, from `after` (exclusive) on:
 * a name's runs when a name is given, else a status's runs, else the time window.
 */
function candidates(indexes: RunIndexes, filter: RunFilter, after: ListPosition | undefined): Iterable<Candidate> {
  const fromMs = filter.fromMs ?? 0;
  const toMs = filter.toMs ?? Number.MAX_SAFE_INTEGER;
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

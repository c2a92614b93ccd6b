// Every run, newest first, filtered by DAG name, status and the days they were created in (the
// browser's days), paged by the API's cursor; new runs appear as their events come.
import { api, query } from '../api';
import { useResource } from '../resource';
import { useLiveRefresh } from '../live';
import { formatDuration, formatParams, runStatuses, statusText } from '../format';
import { href, setQuery, useTypedQuery, type Location } from '../router';
import { StatusBadge } from '../components/status-badge';
import { Time } from '../components/time';
import { Pager } from '../components/pager';
import type { RunSummary } from '../types';

const limit = 50;

export function RunsPage({ loc }: { loc: Location }) {
  const name = loc.search.get('name') ?? '';
  const status = loc.search.get('status') ?? '';
  // yyyy-mm-dd, as the date inputs give them; the API takes Unix seconds.
  const from = loc.search.get('from') ?? '';
  const to = loc.search.get('to') ?? '';
  const filters = { name, status, from, to };
  const cursor = loc.search.get('cursor') ?? '';
  // The cursors of the pages before this one, so that Previous can go back (the API only gives the next).
  const before = (loc.search.get('before') ?? '').split(',').filter(Boolean);
  const [typed, setTyped] = useTypedQuery(name, (typedName) => setQuery({ ...filters, name: typedName }), 400, (text) => text.trim());

  const list = useResource(
    () => api<{ dagRuns: RunSummary[]; nextCursor?: string }>('GET', `/dag-runs${query({ name, status, fromDate: dayStart(from), toDate: dayEnd(to), limit, cursor })}`),
    [name, status, from, to, cursor],
  );
  useLiveRefresh({ dagName: name || undefined, kinds: ['run'] }, list.reload, 500);

  const runs = list.data?.dagRuns;
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); setQuery({ ...filters, name: typed.trim() }); }}>
        <label class="field">
          <span>DAG name</span>
          <input type="search" value={typed} placeholder="Exact DAG name" data-testid="runs-name-filter" onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span>Status</span>
          <select value={status} data-testid="runs-status-filter" onChange={(e) => setQuery({ ...filters, status: e.currentTarget.value })}>
            <option value="">Any status</option>
            {runStatuses.map((s) => <option key={s.value} value={String(s.value)}>{statusText(s.label)}</option>)}
          </select>
        </label>
        <label class="field">
          <span>From</span>
          <input type="date" value={from} max={to || undefined} data-testid="runs-from-filter" onChange={(e) => setQuery({ ...filters, from: e.currentTarget.value })} />
        </label>
        <label class="field">
          <span>To</span>
          <input type="date" value={to} min={from || undefined} data-testid="runs-to-filter" onChange={(e) => setQuery({ ...filters, to: e.currentTarget.value })} />
        </label>
      </form>
      {!runs && list.loading && <p aria-live="polite">Loading…</p>}
      {runs && runs.length === 0 && <p data-testid="runs-empty">No run matches.</p>}
      {runs && runs.length > 0 && (
        <div class="table-scroll">
          <table data-testid="runs-table">
            <thead>
              <tr>
                <th scope="col">DAG</th>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Finished</th>
                <th scope="col">Duration</th>
                <th scope="col">Params</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={`${run.name}/${run.dagRunId}`} data-testid={`run-row-${run.dagRunId}`}>
                  <th scope="row"><a href={href.dag(run.name)}>{run.name}</a></th>
                  <td><a class="mono" href={href.run(run.name, run.dagRunId)} data-testid={`run-link-${run.dagRunId}`}>{run.dagRunId.slice(0, 13)}…</a></td>
                  <td><StatusBadge label={run.statusLabel} /></td>
                  <td><Time iso={run.startedAt || run.queuedAt} /></td>
                  <td><Time iso={run.finishedAt} /></td>
                  <td>{formatDuration(run.startedAt, run.finishedAt)}</td>
                  <td class="mono small">{formatParams(run.params)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(cursor || list.data?.nextCursor) && (
        <Pager
          label="Run"
          page={before.length + (cursor ? 2 : 1)}
          hasPrev={cursor !== ''}
          hasNext={Boolean(list.data?.nextCursor)}
          onPrev={() => setQuery({ ...filters, cursor: before[before.length - 1], before: before.slice(0, -1).join(',') })}
          onNext={() => setQuery({ ...filters, cursor: list.data?.nextCursor, before: cursor ? [...before, cursor].join(',') : '' })}
        />
      )}
    </section>
  );
}

/** The first second of a day in the browser's time zone, as Unix seconds; undefined for none. */
function dayStart(day: string): number | undefined {
  const at = day ? new Date(`${day}T00:00:00`).getTime() : NaN;
  return Number.isNaN(at) ? undefined : Math.floor(at / 1000);
}

/** The last second of a day in the browser's time zone (the API's toDate takes its whole second). */
function dayEnd(day: string): number | undefined {
  const at = day ? new Date(`${day}T23:59:59`).getTime() : NaN;
  return Number.isNaN(at) ? undefined : Math.floor(at / 1000);
}

// Every run, newest first, filtered by DAG name and status, paged by the API's cursor; new
// runs appear as their events come.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api';
import { useResource } from '../resource';
import { useLiveRefresh } from '../live';
import { formatDuration, formatParams, runStatuses, statusText } from '../format';
import { href, setQuery, type Location } from '../router';
import { StatusBadge } from '../components/status-badge';
import { Time } from '../components/time';
import { Pager } from '../components/pager';
import type { RunSummary } from '../types';

const limit = 50;

export function RunsPage({ loc }: { loc: Location }) {
  const name = loc.search.get('name') ?? '';
  const status = loc.search.get('status') ?? '';
  const cursor = loc.search.get('cursor') ?? '';
  // The cursors of the pages before this one, so that Previous can go back (the API only gives the next).
  const before = (loc.search.get('before') ?? '').split(',').filter(Boolean);
  const [typed, setTyped] = useState(name);
  const pushed = useRef(name);

  useEffect(() => {
    if (typed === name) return;
    const timer = setTimeout(() => {
      pushed.current = typed.trim();
      setQuery({ name: typed.trim(), status });
    }, 400);
    return () => clearTimeout(timer);
  }, [typed]);
  useEffect(() => {
    if (name !== pushed.current) {
      pushed.current = name;
      setTyped(name);
    }
  }, [name]);

  const list = useResource(
    () => api<{ dagRuns: RunSummary[]; nextCursor?: string }>('GET', `/dag-runs${query({ name, status, limit, cursor })}`),
    [name, status, cursor],
  );
  useLiveRefresh({ dagName: name || undefined, kinds: ['run'] }, list.reload, 500);

  const runs = list.data?.dagRuns;
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); setQuery({ name: typed.trim(), status }); }}>
        <label class="field">
          <span>DAG name</span>
          <input type="search" value={typed} placeholder="Exact DAG name" data-testid="runs-name-filter" onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span>Status</span>
          <select value={status} data-testid="runs-status-filter" onChange={(e) => setQuery({ name, status: e.currentTarget.value })}>
            <option value="">Any status</option>
            {runStatuses.map((s) => <option key={s.value} value={String(s.value)}>{statusText(s.label)}</option>)}
          </select>
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
          onPrev={() => setQuery({ name, status, cursor: before[before.length - 1], before: before.slice(0, -1).join(',') })}
          onNext={() => setQuery({ name, status, cursor: list.data?.nextCursor, before: cursor ? [...before, cursor].join(',') : '' })}
        />
      )}
    </section>
  );
}

// The DAGs page: every definition with its latest run, searchable by name and tag, paged.
import { api, query } from '../api';
import { useResource } from '../resource';
import { useLiveRefresh } from '../live';
import { href, setQuery, useTypedQuery, type Location } from '../router';
import { StatusBadge } from '../components/status-badge';
import { Time } from '../components/time';
import { Pager } from '../components/pager';
import { StartButton } from '../components/start-button';
import { SuspendButton } from '../components/suspend-button';
import type { DagList, DagListItem } from '../types';

const perPage = 50;

export function DagsPage({ loc }: { loc: Location }) {
  const name = loc.search.get('name') ?? '';
  const tag = loc.search.get('tag') ?? '';
  const page = Math.max(1, Number(loc.search.get('page')) || 1);
  // The search box filters as one types, once typing pauses.
  const [typed, setTyped] = useTypedQuery(name, (typedName) => setQuery({ name: typedName, tag }), 250);

  const list = useResource(() => api<DagList>('GET', `/dags${query({ page, perPage, name, tag })}`), [page, name, tag]);
  const tags = useResource(() => api<{ tags: string[] }>('GET', '/dags/tags'), []);
  useLiveRefresh({ kinds: ['run', 'dag'] }, () => {
    list.reload();
    tags.reload();
  }, 1000);

  const pagination = list.data?.pagination;
  return (
    <section aria-labelledby="dags-title">
      <h1 id="dags-title">DAGs</h1>
      <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); setQuery({ name: typed, tag }); }}>
        <label class="field">
          <span>Name</span>
          <input type="search" value={typed} placeholder="Search by name" data-testid="dag-search" onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span>Tag</span>
          <select value={tag} data-testid="tag-filter" onChange={(e) => setQuery({ name, tag: e.currentTarget.value })}>
            <option value="">All tags</option>
            {(tags.data?.tags ?? []).concat(tag && !tags.data?.tags.includes(tag) ? [tag] : []).map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </label>
      </form>
      {list.data && list.data.dags.length === 0 && <p data-testid="dags-empty">{name || tag ? 'No DAG matches these filters.' : 'No DAGs yet.'}</p>}
      {!list.data && list.loading && <p aria-live="polite">Loading…</p>}
      {list.data && list.data.dags.length > 0 && (
        <div class="table-scroll">
          <table data-testid="dags-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Tags</th>
                <th scope="col">Latest run</th>
                <th scope="col">Schedule</th>
                <th scope="col">Next run</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.dags.map((item) => <DagRow key={item.fileName} item={item} loc={loc} onChanged={list.reload} />)}
            </tbody>
          </table>
        </div>
      )}
      {pagination && pagination.totalPages > 1 && (
        <Pager
          label="DAG"
          page={pagination.currentPage}
          totalPages={pagination.totalPages}
          hasPrev={pagination.prevPage !== null}
          hasNext={pagination.nextPage !== null}
          onPrev={() => setQuery({ name, tag, page: pagination.prevPage ?? undefined })}
          onNext={() => setQuery({ name, tag, page: pagination.nextPage ?? undefined })}
        />
      )}
    </section>
  );
}

function DagRow({ item, loc, onChanged }: { item: DagListItem; loc: Location; onChanged: () => void }) {
  const latest = item.latestDAGRun;
  const runName = item.dag.name || item.fileName;
  const name = loc.search.get('name') ?? '';
  return (
    <tr data-testid={`dag-row-${item.fileName}`}>
      <th scope="row">
        <a href={href.dag(item.fileName)} data-testid={`dag-link-${item.fileName}`}>{item.fileName}</a>
        {item.dag.description && <div class="muted small">{item.dag.description}</div>}
        {item.errors.length > 0 && <div class="invalid small" title={item.errors.join('\n')}>Invalid definition</div>}
      </th>
      <td>
        {item.dag.tags.map((t) => (
          <button type="button" class="tag" key={t} aria-label={`Show DAGs tagged ${t}`} onClick={() => setQuery({ name, tag: t })}>{t}</button>
        ))}
      </td>
      <td data-testid={`dag-status-${item.fileName}`}>
        {latest.dagRunId
          ? <a href={href.run(latest.name || runName, latest.dagRunId)} aria-label={`Latest run of ${item.fileName}: ${latest.statusLabel}`}><StatusBadge label={latest.statusLabel} /></a>
          : <span class="muted">never run</span>}
        {latest.startedAt && <div class="muted small"><Time iso={latest.startedAt} /></div>}
      </td>
      <td><code>{item.dag.schedule.map((s) => s.expression).join(', ') || '—'}</code></td>
      <td><Time iso={item.nextRun} /></td>
      <td data-testid={`dag-suspended-${item.fileName}`}>{item.suspended ? <span class="badge suspended">suspended</span> : 'active'}</td>
      <td class="actions">
        <StartButton fileName={item.fileName} runName={runName} dag={item.dag} disabled={item.errors.length > 0} />
        <SuspendButton fileName={item.fileName} suspended={item.suspended} onDone={onChanged} />
      </td>
    </tr>
  );
}

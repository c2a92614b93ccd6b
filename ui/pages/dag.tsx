// One DAG: its details, recent runs and its definition, editable.
import { api, path } from '../api';
import { useResource } from '../resource';
import { useLiveRefresh } from '../live';
import { formatDuration } from '../format';
import { href } from '../router';
import { StatusBadge } from '../components/status-badge';
import { Time } from '../components/time';
import { StartButton } from '../components/start-button';
import { SuspendButton } from '../components/suspend-button';
import { SpecEditor } from '../components/spec-editor';
import { DagGraph } from '../components/dag-graph';
import { HistoryGrid } from '../components/history-grid';
import type { DagDetailsAnswer, RunDetails } from '../types';

export function DagPage({ fileName }: { fileName: string }) {
  const details = useResource(() => api<DagDetailsAnswer>('GET', path`/dags/${fileName}`), [fileName]);
  const runs = useResource(() => api<{ dagRuns: RunDetails[] }>('GET', path`/dags/${fileName}/dag-runs`).then((a) => a.dagRuns), [fileName]);
  const spec = useResource(() => api<{ spec: string }>('GET', path`/dags/${fileName}/spec`).then((a) => a.spec), [fileName]);
  const runName = details.data?.dag.name;
  // Step events too: the graph shows the latest run's steps as they change (the history holds its nodes).
  useLiveRefresh(runName ? { dagName: runName, kinds: ['run', 'step'] } : null, () => {
    runs.reload();
    details.reload();
  }, 500);
  const latest = runs.data?.[0];

  const d = details.data;
  return (
    <section aria-labelledby="dag-title">
      <p class="breadcrumb"><a href="/dags">DAGs</a> ›</p>
      <h1 id="dag-title">{fileName}</h1>
      {!d && <p aria-live="polite">{details.failed ? 'This DAG could not be read.' : 'Loading…'}</p>}
      {d && (
        <>
          <div class="toolbar">
            <StartButton fileName={fileName} runName={d.dag.name || fileName} dag={d.dag} disabled={d.errors.length > 0} />
            <SuspendButton fileName={fileName} suspended={d.suspended} onDone={details.reload} />
            <a href={href.runs(d.dag.name || fileName)}>All runs</a>
          </div>
          <dl class="facts" data-testid="dag-details">
            {d.dag.description && <><dt>Description</dt><dd>{d.dag.description}</dd></>}
            <dt>Tags</dt><dd>{d.dag.tags.join(', ') || '—'}</dd>
            <dt>Schedule</dt><dd><code>{d.dag.schedule.map((s) => s.expression).join(', ') || '—'}</code></dd>
            <dt>Next run</dt><dd><Time iso={d.nextRun} /></dd>
            <dt>State</dt><dd>{d.suspended ? 'suspended' : 'active'}</dd>
            <dt>Params</dt><dd class="mono">{d.dag.params.join(' ') || '—'}</dd>
            <dt>Steps</dt><dd>{d.dag.steps.map((s) => s.name).join(', ') || '—'}</dd>
            <dt>Latest run</dt>
            <dd>{d.latestDAGRun.dagRunId ? <a href={href.run(d.latestDAGRun.name, d.latestDAGRun.dagRunId)}><StatusBadge label={d.latestDAGRun.statusLabel} /></a> : 'never run'}</dd>
            {d.missedRuns.length > 0 && <><dt>Missed ticks</dt><dd>{d.missedRuns.length} while the server was down (newest <Time iso={d.missedRuns[d.missedRuns.length - 1].scheduledAt} />)</dd></>}
          </dl>
          <h2>Steps</h2>
          <DagGraph steps={d.dag.steps} statuses={new Map(latest?.nodes.map((n) => [n.step.name, n.statusLabel]))} label={latest ? `The steps, coloured by the latest run's statuses` : 'The steps (not run yet)'} />
          {d.errors.length > 0 && (
            <div class="problems-box">
              <h2>Problems in the stored definition</h2>
              <ul class="problems">{d.errors.map((e, i) => <li key={i}>{e}</li>)}</ul>
            </div>
          )}
        </>
      )}

      <h2>Recent runs</h2>
      {runs.data && runs.data.length === 0 && <p>No runs yet.</p>}
      {runs.data && runs.data.length > 0 && d && <HistoryGrid stepNames={d.dag.steps.map((s) => s.name)} runs={runs.data} />}
      {runs.data && runs.data.length > 0 && (
        <div class="table-scroll">
          <table data-testid="dag-runs-table">
            <thead>
              <tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Duration</th></tr>
            </thead>
            <tbody>
              {runs.data.map((r) => (
                <tr key={r.dagRunId}>
                  <th scope="row"><a class="mono" href={href.run(r.name, r.dagRunId)}>{r.dagRunId.slice(0, 13)}…</a></th>
                  <td><StatusBadge label={r.statusLabel} /></td>
                  <td><Time iso={r.startedAt || r.queuedAt} /></td>
                  <td>{formatDuration(r.startedAt, r.finishedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Definition</h2>
      {spec.data !== undefined && <SpecEditor fileName={fileName} initial={spec.data} onSaved={details.reload} />}
    </section>
  );
}

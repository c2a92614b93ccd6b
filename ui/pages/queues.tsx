// The queues: their limits (a custom queue's edited in place by those who may), what runs and what waits (and for what).
import { useState } from 'preact/hooks';
import { api, path } from '../api';
import { useResource } from '../resource';
import { useLiveRefresh } from '../live';
import { href } from '../router';
import { StatusBadge } from '../components/status-badge';
import { useCan } from '../session';
import type { Queue } from '../types';

const waiting: Record<string, string> = { queue: 'a slot of the queue', maxActiveRuns: "its DAG's maxActiveRuns", suspended: 'its DAG to be resumed' };

export function QueuesPage() {
  const queues = useResource(() => api<{ queues: Queue[] }>('GET', '/queues').then((a) => a.queues), []);
  useLiveRefresh({ kinds: ['run', 'queue'] }, queues.reload, 500);
  const writable = useCan('write');
  const list = queues.data;
  return (
    <section aria-labelledby="queues-title">
      <h1 id="queues-title">Queues</h1>
      {!list && queues.loading && <p aria-live="polite">Loading…</p>}
      {list && list.length === 0 && <p data-testid="queues-empty">No queue has runs, and none is configured.</p>}
      {list && list.length > 0 && (
        <div class="table-scroll">
          <table data-testid="queues-table">
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col">Type</th>
                <th scope="col">Limit</th>
                <th scope="col">Running</th>
                <th scope="col">Queued</th>
                <th scope="col">Oldest wait</th>
                <th scope="col">Runs</th>
              </tr>
            </thead>
            <tbody>
              {list.map((q) => (
                <tr key={q.name} data-testid={`queue-row-${q.name}`}>
                  <th scope="row">{q.name}</th>
                  <td>{q.type}</td>
                  <td>{writable && q.type === 'custom' ? <LimitEditor queue={q} onSaved={queues.reload} /> : q.maxConcurrency ?? '—'}</td>
                  <td>{q.summary.running}</td>
                  <td>{q.summary.queued}</td>
                  <td>{q.oldestQueuedAgeSec === null ? '—' : `${q.oldestQueuedAgeSec}s`}</td>
                  <td>
                    <ul class="plain">
                      {[...q.runningDAGRuns, ...q.queuedDAGRuns].map((r) => (
                        <li key={r.dagRunId}>
                          <a href={href.run(r.name, r.dagRunId)}>{r.name}</a> <StatusBadge label={r.statusLabel} />
                          {r.waitingFor && <span class="muted small"> waiting for {waiting[r.waitingFor] ?? r.waitingFor}</span>}
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A custom queue's limit; PATCH applies it at once, and the page reads the queue again. */
function LimitEditor({ queue, onSaved }: { queue: Queue; onSaved: () => void }) {
  const [value, setValue] = useState(String(queue.maxConcurrency ?? ''));
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    setProblem('');
    try {
      // Sent as typed (a number when it reads as one): the API says what it refuses, and why.
      const limit = value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
      await api('PATCH', path`/queues/${queue.name}`, { maxConcurrency: limit });
      onSaved();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  const unchanged = value === String(queue.maxConcurrency ?? '');
  return (
    <form class="actions limit" noValidate onSubmit={(e) => { e.preventDefault(); void save(); }}>
      <input type="number" min={1} step={1} value={value} aria-label={`Limit of ${queue.name}`} data-testid={`queue-limit-${queue.name}`}
        onInput={(e) => { setValue(e.currentTarget.value); setProblem(''); }} />
      <button type="submit" disabled={busy || unchanged} data-testid={`queue-limit-save-${queue.name}`}>Save</button>
      {problem && <span class="invalid small" role="alert" data-testid={`queue-limit-error-${queue.name}`}>{problem}</span>}
    </form>
  );
}

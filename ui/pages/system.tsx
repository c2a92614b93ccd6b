// The server: its health and version, the machine's resources over the last hour (the resource
// history, sampled every 5 s by the server), and the key figures of its metrics.
import { useEffect } from 'preact/hooks';
import { api, apiText } from '../api';
import { LineChart, type Point } from '../components/line-chart';
import { parseMetrics, type Sample } from '../metrics-text';
import { useResource } from '../resource';
import type { Health } from '../types';

interface ResourceHistory { cpu: Point[]; memory: Point[]; disk: Point[]; load: Point[] }

/** The resource history and the metrics are read again this often while the page is open. */
const REFRESH_MS = 15_000;

const FIGURES: Array<[name: string, label: string]> = [
  ['troupe_dag_runs_currently_running', 'Runs running'],
  ['troupe_dag_runs_queued_total', 'Runs waiting in queues'],
  ['troupe_dags_total', 'DAG files'],
  ['troupe_scheduler_running', 'Scheduler running'],
  ['troupe_event_subscribers', 'Event stream clients'],
];
const RUNS_ENDED = 'troupe_dag_runs_total';
const WANTED = new Set([...FIGURES.map(([name]) => name), RUNS_ENDED]);

export function SystemPage() {
  const health = useResource(() => api<Health>('GET', '/health'), []);
  const history = useResource(() => api<ResourceHistory>('GET', '/services/resources/history?duration=1h'), []);
  const metrics = useResource(async () => parseMetrics(await apiText('/metrics'), WANTED), []);
  useEffect(() => {
    const timer = setInterval(() => {
      history.reload();
      metrics.reload();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const h = health.data;
  const refresh = () => {
    health.reload();
    history.reload();
    metrics.reload();
  };
  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      <div class="toolbar">
        <button type="button" onClick={refresh} disabled={health.loading}>Refresh</button>
      </div>
      {h && (
        <div class="table-scroll">
          <table data-testid="system-table">
            <tbody>
              <tr><th scope="row">Health</th><td data-testid="health-status"><span class={`badge ${h.status === 'healthy' ? 'status-succeeded' : 'status-failed'}`}>{h.status}</span></td></tr>
              <tr><th scope="row">Version</th><td data-testid="server-version">{h.version}</td></tr>
              <tr><th scope="row">Up for</th><td>{formatUptime(h.uptime)}</td></tr>
              <tr><th scope="row">Server time</th><td>{new Date(h.timestamp).toLocaleString()}</td></tr>
            </tbody>
          </table>
        </div>
      )}
      <h2>Resources, last hour</h2>
      {history.data && (
        <div class="charts" data-testid="resource-charts">
          <LineChart id="cpu" title="CPU busy" unit="%" points={history.data.cpu} max={100} />
          <LineChart id="memory" title="Memory in use" unit="%" points={history.data.memory} max={100} />
          <LineChart id="disk" title="Disk in use (data directory)" unit="%" points={history.data.disk} max={100} />
          <LineChart id="load" title="Load average (1 min)" unit="" points={history.data.load} />
        </div>
      )}
      <h2>Key figures</h2>
      {metrics.data && <KeyFigures samples={metrics.data} />}
    </section>
  );
}

function KeyFigures({ samples }: { samples: Sample[] }) {
  const value = (name: string) => samples.find((sample) => sample.name === name && Object.keys(sample.labels).length === 0)?.value;
  const ended = samples.filter((sample) => sample.name === RUNS_ENDED && sample.labels.status);
  return (
    <div class="table-scroll">
      <table data-testid="metrics-table">
        <tbody>
          {FIGURES.map(([name, label]) => (
            <tr key={name}>
              <th scope="row">{label}</th>
              <td data-testid={`metric-${name}`}>{name === 'troupe_scheduler_running' ? (value(name) === 1 ? 'yes' : 'no') : value(name) ?? '–'}</td>
            </tr>
          ))}
          <tr>
            <th scope="row">Runs ended since the server started</th>
            <td data-testid="metric-runs-ended">{ended.length === 0 ? 'none' : ended.map((sample) => `${sample.labels.status} ${sample.value}`).join(', ')}</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}

function formatUptime(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return [d && `${d}d`, (d || h) && `${h}h`, `${m}m`, `${seconds % 60}s`].filter(Boolean).join(' ');
}

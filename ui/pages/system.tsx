// The server's health and version.
import { api } from '../api';
import { useResource } from '../resource';
import type { Health } from '../types';

export function SystemPage() {
  const health = useResource(() => api<Health>('GET', '/health'), []);
  const h = health.data;
  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      <div class="toolbar">
        <button type="button" onClick={health.reload} disabled={health.loading}>Refresh</button>
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
    </section>
  );
}

function formatUptime(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return [d && `${d}d`, (d || h) && `${h}h`, `${m}m`, `${seconds % 60}s`].filter(Boolean).join(' ');
}

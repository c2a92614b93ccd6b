// A DAG's recent runs as a grid, as Dagu shows it: its steps down, its runs across (newest first),
// one cell per step and run coloured by the step's status there, the status also in words.
import { formatTime, statusText } from '../format';
import { href } from '../router';
import type { RunDetails } from '../types';
import './graph.css';

export function HistoryGrid({ stepNames, runs }: { stepNames: readonly string[]; runs: readonly RunDetails[] }) {
  // Steps a run had that the definition no longer has still get a row, after the current ones.
  const names = [...stepNames];
  for (const run of runs) for (const node of run.nodes) if (!names.includes(node.step.name)) names.push(node.step.name);
  const statusOf = runs.map((run) => new Map(run.nodes.map((node) => [node.step.name, node.statusLabel])));
  return (
    <div class="table-scroll history-wrap">
      <table class="history" data-testid="history-grid">
        <caption class="sr-only">Each step's status in the latest runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            {runs.map((run) => {
              const at = run.startedAt || run.queuedAt;
              return (
                <th key={run.dagRunId} scope="col">
                  <a href={href.run(run.name, run.dagRunId)} class={`run-head status-text-${run.statusLabel}`} data-testid={`history-run-${run.dagRunId}`} title={`${formatTime(at)}: ${statusText(run.statusLabel)}`} aria-label={`Run of ${formatTime(at)}, ${statusText(run.statusLabel)}`}>
                    {shortTime(at)}
                  </a>
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {names.map((name) => (
            <tr key={name}>
              <th scope="row" title={name}>{name}</th>
              {runs.map((run, i) => {
                const status = statusOf[i].get(name) || 'none';
                const words = status === 'none' ? 'not in this run' : statusText(status);
                return (
                  <td key={run.dagRunId} class={`cell status-${status}`} data-testid={`history-cell-${name}-${run.dagRunId}`} data-status={status} title={`${name}: ${words}`} aria-label={`${name}: ${words}`}>
                    <span class="sr-only">{words}</span>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function shortTime(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '—';
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

// The body of a run's notification mail, as Dagu's: an HTML page with the run (name, run id,
// status, parameters, start and end) and a table of its steps (#, step, started, finished, status,
// command, error). Every value from the run is escaped. Pure.
import { nodeStatusLabel, runStatusLabel, type NodeRecord, type RunRecord } from '../../core/index.ts';

const STYLE = [
  'body { font-family: -apple-system, "Segoe UI", Roboto, sans-serif; color: #1e293b; }',
  'table { border-collapse: collapse; }',
  'th, td { border: 1px solid #e2e8f0; padding: 6px 10px; text-align: left; vertical-align: top; font-size: 13px; }',
  'th { background: #2563eb; color: #ffffff; }',
  '.failed, .error { color: #dc2626; } .succeeded { color: #059669; } .aborted { color: #db2777; }',
  '.partially_succeeded { color: #ea580c; } .skipped, .not_started { color: #6b7280; } .running { color: #2563eb; }',
  '.command { font-family: monospace; }',
].join('\n');

export function runReportHtml(record: RunRecord): string {
  const status = runStatusLabel(record.status);
  const info: Array<[string, string]> = [
    ['DAG', record.name],
    ['DAG Run ID', record.dagRunId],
    ['Status', status],
    ['Parameters', parametersText(record.params)],
    ['Started At', record.startedAt],
    ['Finished At', record.finishedAt],
    ...(record.error ? [['Error', record.error] as [string, string]] : []),
  ];
  const infoRows = info.map(([label, value]) => `<tr><th>${label}</th><td>${escapeHtml(value)}</td></tr>`);
  const stepRows = record.nodes.map((node, index) => stepRow(node, index));
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="UTF-8"><style>', STYLE, '</style></head><body>',
    `<h2>DAG run ${escapeHtml(record.name)}: <span class="${status}">${status.toUpperCase()}</span></h2>`,
    `<table>${infoRows.join('')}</table>`,
    '<h3>Steps</h3>',
    '<table><thead><tr><th>#</th><th>Step</th><th>Started At</th><th>Finished At</th><th>Status</th><th>Command</th><th>Error</th></tr></thead>',
    `<tbody>${stepRows.join('')}</tbody></table>`,
    '</body></html>',
  ].join('\n');
}

function stepRow(node: NodeRecord, index: number): string {
  const status = nodeStatusLabel(node.status);
  const cells = [
    `<td>${index + 1}</td>`,
    `<td>${escapeHtml(node.step.name)}</td>`,
    `<td>${escapeHtml(node.startedAt)}</td>`,
    `<td>${escapeHtml(node.finishedAt)}</td>`,
    `<td class="${status}">${status}</td>`,
    `<td class="command">${escapeHtml(commandText(node))}</td>`,
    `<td class="error">${escapeHtml(node.error)}</td>`,
  ];
  return `<tr>${cells.join('')}</tr>`;
}

/** The step's command line(s), as the run details show them; a sub DAG call shows its target. */
function commandText(node: NodeRecord): string {
  const { step } = node;
  if (step.commands && step.commands.length > 0) return step.commands.map(({ command, args }) => [command, ...args].join(' ')).join('; ');
  if (step.command !== undefined) return [step.command, ...(step.args ?? [])].join(' ');
  return step.call ?? step.run ?? '';
}

function parametersText(params: string): string {
  if (params === '' || params === '{}') return '(none)';
  return params;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

// The dashboard's entry: renders the app into #app (index.html) and takes over same-origin page links.
//
// Hooks for browser tests (data-testid):
//   main-nav, nav-dags, nav-runs, nav-queues, nav-system      the top navigation and its links
//   error-alert (one per message, inside role="alert"), sign-in-link (on a 401)
//   pager, pager-prev, pager-next, pager-position              paging of a listing
//   DAGs:   dag-search, tag-filter, dags-table, dags-empty, dag-row-{fileName}, dag-link-{fileName},
//           dag-status-{fileName}, dag-suspended-{fileName}, start-button-{fileName},
//           suspend-button-{fileName}, params-dialog, param-{NAME} (1, 2... for positional ones),
//           param-text, params-submit, params-error (a refused start, shown inside the form)
//   Run:    run-status, run-started-at, run-finished-at, run-queued-at, run-params, stop-button,
//           retry-button, dequeue-button, node-table, node-row-{step}, node-status-{step},
//           node-error-{step}, step-button-{step}, log-tab-stdout, log-tab-stderr, log-view, log-state
//   Runs:   runs-name-filter, runs-status-filter, runs-table, runs-empty, run-row-{dagRunId}, run-link-{dagRunId}
//   DAG:    dag-details, dag-runs-table, spec-editor, spec-errors, spec-valid, save-spec, spec-saved
//   Graph (DAG and run pages): dag-graph, graph-node-{step} (data-status; `none` when not run), graph-edge-{from}-{to}
//   History (DAG page): history-grid, history-run-{dagRunId} (column links), history-cell-{step}-{dagRunId} (data-status)
//   Sub runs: sub-run-link-{step} (one per sub DAG run of the step), root-run-link (on a sub run's page)
//   Queues: queues-table, queues-empty, queue-row-{name};  System: system-table, health-status, server-version
// Statuses also carry data-status="{statusLabel}" on their badge.
import { render } from 'preact';
import { App } from './app';
import { startLinkInterception } from './router';
import './styles.css';

startLinkInterception();
render(<App />, document.getElementById('app') ?? document.body);

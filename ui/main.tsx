// The dashboard's entry: renders the app into #app (index.html) and takes over same-origin page links.
//
// Hooks for browser tests (data-testid):
//   main-nav, nav-dags, nav-runs, nav-queues, nav-system      the top navigation and its links
//   nav-users, nav-api-keys (admins only), signed-in-user, sign-out, nav-sign-in (when signed out)
//   error-alert (one per message, inside role="alert"), sign-in-link (on a 401, to /login?next=)
//   Login:  login-form, login-username, login-password, login-submit, login-error, login-oidc
//   pager, pager-prev, pager-next, pager-position              paging of a listing
//   DAGs:   dag-search, tag-filter, dags-table, dags-empty, dag-row-{fileName}, dag-link-{fileName},
//           dag-status-{fileName}, dag-suspended-{fileName}, start-button-{fileName},
//           suspend-button-{fileName}, params-dialog, param-{NAME} (1, 2... for positional ones),
//           param-text, params-submit, params-error (a refused start, shown inside the form)
//   Run:    run-status, run-started-at, run-finished-at, run-queued-at, run-params, stop-button,
//           retry-button, dequeue-button, node-table, node-row-{step}, node-status-{step},
//           node-error-{step}, step-button-{step}, log-tab-stdout, log-tab-stderr, log-view, log-state,
//           reschedule-button, retry-from-{step}, step-status-select-{step}, step-status-apply-{step},
//           step-status-error-{step} (a refused status), outputs-table, output-{name} (the value)
//   Runs:   runs-name-filter, runs-status-filter, runs-table, runs-empty, run-row-{dagRunId}, run-link-{dagRunId}
//   DAG:    dag-details, dag-runs-table, spec-editor, spec-errors, spec-valid, save-spec, spec-saved,
//           spec-read-only (the note shown instead of Save), spec-bad-line-{n} (a line a problem names, in the gutter)
//   Graph (DAG and run pages): dag-graph, graph-node-{step} (data-status; `none` when not run), graph-edge-{from}-{to}
//   History (DAG page): history-grid, history-run-{dagRunId} (column links), history-cell-{step}-{dagRunId} (data-status)
//   Sub runs: sub-run-link-{step} (one per sub DAG run of the step), root-run-link (on a sub run's page)
//   Queues: queues-table, queues-empty, queue-row-{name}, queue-limit-{name} (input), queue-limit-save-{name},
//           queue-limit-error-{name}
//   System: system-table, health-status, server-version, resource-charts, resource-chart-{cpu|memory|disk|load},
//           resource-now-{series}, metrics-table, metric-{metric name}, metric-runs-ended
//   Runs filters by day: runs-from-filter, runs-to-filter
//   Users:  users-table, users-note, user-row-{username}, user-role-{username} (select), user-reset-{username},
//           user-password-{username}, user-password-save-{username}, user-delete-{username}, user-create-form,
//           user-create-username, user-create-password, user-create-role, user-create-submit, admins-only
//   API keys: api-keys-table, api-keys-empty, api-key-row-{name}, api-key-revoke-{name}, api-key-create-form,
//           api-key-create-name, api-key-create-description, api-key-create-role, api-key-create-submit,
//           api-key-created, api-key-new (the key, shown once)
// Actions a role may not take are not rendered at all (Start, Suspend, Stop, Retry, Reschedule, Dequeue,
// a step's Retry from here and status, Save...);
// the spec editor is read-only (readonly attribute) without the write permission.
// Statuses also carry data-status="{statusLabel}" on their badge.
import { render } from 'preact';
import { App } from './app';
import { startLinkInterception } from './router';
import { loadSession } from './session';
import './styles.css';

startLinkInterception();
void loadSession();
render(<App />, document.getElementById('app') ?? document.body);

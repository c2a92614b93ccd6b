// One run: its status, times, params and nodes, kept live from the event stream, with the
// selected step's log followed as it is written.
import { useState } from 'preact/hooks';
import { api, path } from '../api';
import { reportError } from '../alerts';
import { useResource } from '../resource';
import { useLiveRefresh } from '../live';
import { formatDuration, formatParams } from '../format';
import { href, setQuery, type Location } from '../router';
import { useCan } from '../session';
import { StatusBadge } from '../components/status-badge';
import { Time } from '../components/time';
import { LogView } from '../components/log-view';
import { DagGraph } from '../components/dag-graph';
import { SubRunLinks } from '../components/sub-run-links';
import { RescheduleButton, StepActions } from '../components/run-actions';
import { OutputsTable } from '../components/outputs-table';
import { handlerNames, type Node, type RunDetails } from '../types';

const RUNNING = 1;
const QUEUED = 5;
const NOT_STARTED = 0;

export function RunPage({ name, dagRunId, subDagRunId, loc }: { name: string; dagRunId: string; subDagRunId?: string; loc: Location }) {
  // A sub DAG run is read through its root run: `name` and `dagRunId` are the root's.
  const runPath = path`/dag-runs/${name}/${dagRunId}` + (subDagRunId ? path`/sub-dag-runs/${subDagRunId}` : '');
  const run = useResource(() => api<{ dagRunDetails: RunDetails }>('GET', runPath).then((a) => a.dagRunDetails), [runPath]);
  // The path may say `latest`; events and retries need the run's own id.
  const id = run.data?.dagRunId;
  useLiveRefresh(id ? { dagRunId: id, kinds: ['run', 'step'] } : null, run.reload, 150);
  const [busy, setBusy] = useState(false);
  const mayRun = useCan('run');

  const act = async (call: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await call();
      run.reload();
    } catch (error) {
      reportError(error);
    } finally {
      setBusy(false);
    }
  };

  const details = run.data;
  if (!details) {
    return (
      <section>
        <h1>Run {dagRunId}</h1>
        <p aria-live="polite">{run.failed ? 'This run could not be read.' : 'Loading…'}</p>
      </section>
    );
  }

  const nodes: { node: Node; handler?: string }[] = details.nodes.map((node) => ({ node }));
  for (const handler of handlerNames) {
    const node = details[handler];
    if (node) nodes.push({ node, handler });
  }
  const step = loc.search.get('step') ?? '';
  const stream = loc.search.get('stream') === 'stderr' ? 'stderr' : 'stdout';
  const selected = nodes.find((n) => n.node.step.name === step || n.handler === step);
  const selectStep = (s: string) => setQuery({ step: s, stream });

  // The API stops and retries a sub DAG run through its root run; a role without `run` sees none of these.
  const canStop = mayRun && !subDagRunId && details.status === RUNNING;
  const ended = details.status !== RUNNING && details.status !== QUEUED && details.status !== NOT_STARTED;
  const canRetry = mayRun && !subDagRunId && ended;
  // A step's status is set on a run that is not active, a sub run's too (through its root's path).
  const canSetStatus = mayRun && ended;
  const canDequeue = mayRun && !subDagRunId && details.status === QUEUED;
  const rootId = subDagRunId ? dagRunId : details.dagRunId;

  return (
    <section aria-labelledby="run-title">
      <p class="breadcrumb"><a href={href.dag(details.name)}>{details.name}</a> › {subDagRunId ? <><a href={href.run(name, dagRunId)} data-testid="root-run-link">run of {name}</a> › sub run</> : 'run'}</p>
      <h1 id="run-title">
        {details.name} <span class="muted mono small">{details.dagRunId}</span>
      </h1>
      <div class="toolbar">
        <StatusBadge label={details.statusLabel} testId="run-status" />
        {canStop && <button type="button" disabled={busy} data-testid="stop-button" onClick={() => void act(() => api('POST', path`/dag-runs/${name}/${details.dagRunId}/stop`, {}))}>Stop</button>}
        {canRetry && <button type="button" disabled={busy} data-testid="retry-button" onClick={() => void act(() => api('POST', path`/dag-runs/${name}/${details.dagRunId}/retry`, { dagRunId: details.dagRunId }))}>Retry</button>}
        {canRetry && <RescheduleButton name={details.name} dagRunId={details.dagRunId} />}
        {canDequeue && <button type="button" disabled={busy} data-testid="dequeue-button" onClick={() => void act(() => api('GET', path`/dag-runs/${name}/${details.dagRunId}/dequeue`))}>Dequeue</button>}
      </div>
      <dl class="facts">
        {details.queuedAt && <><dt>Queued</dt><dd data-testid="run-queued-at"><Time iso={details.queuedAt} /></dd></>}
        <dt>Started</dt><dd data-testid="run-started-at"><Time iso={details.startedAt} /></dd>
        <dt>Finished</dt><dd data-testid="run-finished-at"><Time iso={details.finishedAt} /></dd>
        <dt>Duration</dt><dd>{formatDuration(details.startedAt, details.finishedAt)}</dd>
        <dt>Params</dt><dd class="mono" data-testid="run-params">{formatParams(details.params) || '—'}</dd>
        {details.workerId && <><dt>Worker</dt><dd class="mono" data-testid="run-worker">{details.workerId}</dd></>}
      </dl>

      <h2>Steps</h2>
      <DagGraph steps={details.nodes.map((n) => n.step)} statuses={new Map(details.nodes.map((n) => [n.step.name, n.statusLabel]))} selected={step} onSelect={selectStep} label="The run's steps; a step opens its log" />
      <div class="table-scroll">
        <table data-testid="node-table">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">Finished</th>
              <th scope="col">Error</th>
              {canSetStatus && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {nodes.map(({ node, handler }) => {
              const stepName = handler ?? node.step.name;
              const isSelected = selected?.node === node;
              return (
                <tr key={stepName} class={isSelected ? 'selected' : undefined} data-testid={`node-row-${stepName}`}>
                  <th scope="row">
                    <button type="button" class="link-button" aria-pressed={isSelected} aria-label={`Show the log of step ${stepName}`} data-testid={`step-button-${stepName}`} onClick={() => selectStep(stepName)}>
                      {handler ? `${handler} (${node.step.name})` : stepName}
                    </button>
                    {node.retryCount > 0 && <span class="muted small"> retried {node.retryCount}×</span>}
                    <SubRunLinks node={node} stepName={stepName} link={(id) => href.subRun(name, rootId, id)} />
                  </th>
                  <td><StatusBadge label={node.statusLabel} testId={`node-status-${stepName}`} /></td>
                  <td><Time iso={node.startedAt} /></td>
                  <td><Time iso={node.finishedAt} /></td>
                  <td class="error-text" data-testid={`node-error-${stepName}`}>{node.error}</td>
                  {/* Handlers are no steps of the run's record: the API neither retries nor sets them. */}
                  {canSetStatus && <td>{!handler && <StepActions runPath={subDagRunId ? runPath : path`/dag-runs/${name}/${details.dagRunId}`} retryPath={canRetry ? path`/dag-runs/${name}/${details.dagRunId}/retry` : undefined} dagRunId={details.dagRunId} stepName={stepName} onDone={run.reload} />}</td>}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>

      {!subDagRunId && <OutputsTable name={name} dagRunId={details.dagRunId} version={`${details.status}:${details.finishedAt}`} />}

      {selected && (
        <section class="log-panel" aria-labelledby="log-title">
          <h2 id="log-title">Log of {step}</h2>
          <div role="tablist" aria-label="Output stream" class="tabs">
            {(['stdout', 'stderr'] as const).map((s) => (
              <button key={s} id={`log-tab-${s}`} type="button" role="tab" aria-selected={stream === s} aria-controls="log-panel" data-testid={`log-tab-${s}`} onClick={() => setQuery({ step, stream: s })}>
                {s}
              </button>
            ))}
          </div>
          <div role="tabpanel" id="log-panel" aria-labelledby={`log-tab-${stream}`}>
            {/* A retry starts a new attempt with new log files: a new start time opens a new stream. */}
            <LogView key={`${step}:${stream}:${selected.node.startedAt}`} name={name} dagRunId={rootId} subDagRunId={subDagRunId ? details.dagRunId : undefined} step={step} stream={stream} />
          </div>
        </section>
      )}
    </section>
  );
}

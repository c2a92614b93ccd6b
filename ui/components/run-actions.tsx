// The run page's actions on an ended run: reschedule it, retry it from one step, set a step's
// status by hand. Each is rendered only where the API allows it and to a role with `run`.
import { useState } from 'preact/hooks';
import { api, ApiError, path } from '../api';
import { reportError } from '../alerts';
import { href, navigate } from '../router';

// The statuses Dagu lets an operator set on a step (docs/api.md: 0 to 5 are taken).
const settable = [
  { status: 4, label: 'Succeeded' },
  { status: 2, label: 'Failed' },
];

/** A new run of this one, with its stored definition and params; its page opens. */
export function RescheduleButton({ name, dagRunId }: { name: string; dagRunId: string }) {
  const [busy, setBusy] = useState(false);
  const reschedule = async () => {
    setBusy(true);
    try {
      const answer = await api<{ dagRunId?: string }>('POST', path`/dag-runs/${name}/${dagRunId}/reschedule`, {});
      if (answer?.dagRunId) navigate(href.run(name, answer.dagRunId));
    } catch (error) {
      reportError(error);
    } finally {
      setBusy(false);
    }
  };
  return <button type="button" disabled={busy} data-testid="reschedule-button" onClick={() => void reschedule()}>Reschedule</button>;
}

interface StepProps {
  /** The run's API path (a sub run's under its root); `retryPath` is set only where a retry is (a root run). */
  runPath: string;
  retryPath?: string;
  dagRunId: string;
  stepName: string;
  onDone: () => void;
}

/** One node's row actions: Retry from here (a new attempt that runs this step alone) and its status set by hand. */
export function StepActions({ runPath, retryPath, dagRunId, stepName, onDone }: StepProps) {
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState(String(settable[0].status));
  const [problem, setProblem] = useState('');

  const retry = async () => {
    setBusy(true);
    try {
      await api('POST', retryPath!, { dagRunId, stepName });
      onDone();
    } catch (error) {
      reportError(error);
    } finally {
      setBusy(false);
    }
  };

  const apply = async () => {
    setBusy(true);
    setProblem('');
    try {
      await api('PATCH', runPath + path`/steps/${stepName}/status`, { status: Number(status) });
      onDone();
    } catch (error) {
      // A session that ended goes to the alert region, with its sign-in link.
      if (error instanceof ApiError && error.status === 401) reportError(error);
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="actions" noValidate onSubmit={(e) => { e.preventDefault(); void apply(); }}>
      {retryPath && (
        <button type="button" disabled={busy} aria-label={`Retry from step ${stepName}`} data-testid={`retry-from-${stepName}`} onClick={() => void retry()}>
          Retry from here
        </button>
      )}
      <select value={status} aria-label={`New status of step ${stepName}`} data-testid={`step-status-select-${stepName}`}
        onChange={(e) => { setStatus(e.currentTarget.value); setProblem(''); }}>
        {settable.map((s) => <option key={s.status} value={String(s.status)}>{s.label}</option>)}
      </select>
      <button type="submit" disabled={busy} aria-label={`Set the status of step ${stepName}`} data-testid={`step-status-apply-${stepName}`}>Apply</button>
      {problem && <span class="invalid small" role="alert" data-testid={`step-status-error-${stepName}`}>{problem}</span>}
    </form>
  );
}

import { useState } from 'preact/hooks';
import { api, path } from '../api';
import { reportError } from '../alerts';
import { useCan } from '../session';

/** Suspend (no scheduled starts) or resume a DAG, then let the page read it again. */
export function SuspendButton({ fileName, suspended, onDone }: { fileName: string; suspended: boolean; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const allowed = useCan('run');
  const toggle = async () => {
    setBusy(true);
    try {
      await api('POST', path`/dags/${fileName}/suspend`, { suspend: !suspended });
      onDone();
    } catch (error) {
      reportError(error);
    } finally {
      setBusy(false);
    }
  };
  if (!allowed) return null;
  return (
    <button type="button" onClick={() => void toggle()} disabled={busy} aria-label={`${suspended ? 'Resume' : 'Suspend'} ${fileName}`} data-testid={`suspend-button-${fileName}`}>
      {suspended ? 'Resume' : 'Suspend'}
    </button>
  );
}

// Start a DAG: at once when it has no params, else after a small form asks for them. A started
// run opens its page.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, path } from '../api';
import { reportError } from '../alerts';
import { paramForm, paramsBody, type ParamForm } from '../params';
import { href, navigate } from '../router';
import { useCan } from '../session';

interface Props { fileName: string; runName: string; dag: { params: string[]; defaultParams: string }; disabled?: boolean }

export function StartButton({ fileName, runName, dag, disabled }: Props) {
  const allowed = useCan('run');
  const [form, setForm] = useState<ParamForm | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState('');
  const button = useRef<HTMLButtonElement>(null);
  const opened = useRef(false);

  // A closed form gives the focus back to its Start button.
  useEffect(() => {
    if (form) opened.current = true;
    else if (opened.current) {
      opened.current = false;
      button.current?.focus();
    }
  }, [form !== null]);

  const start = async (params: string | undefined, fromForm: boolean) => {
    setBusy(true);
    setProblem('');
    try {
      const answer = await api<{ dagRunId: string }>('POST', path`/dags/${fileName}/start`, params === undefined ? {} : { params });
      setForm(null);
      navigate(href.run(runName, answer.dagRunId));
    } catch (error) {
      // The page behind an open form is inert: a refusal of its params is shown in the form.
      if (fromForm) setProblem(error instanceof Error ? error.message : String(error));
      if (!fromForm || (error instanceof ApiError && error.status === 401)) reportError(error);
    } finally {
      setBusy(false);
    }
  };

  const onClick = () => {
    const wanted = paramForm(dag);
    if (wanted.kind === 'none') void start(undefined, false);
    else setForm(wanted);
  };

  // Not offered at all to a role that may not start (the API would refuse it).
  if (!allowed) return null;
  return (
    <>
      <button ref={button} type="button" onClick={onClick} disabled={disabled || busy} aria-label={`Start ${fileName}`} data-testid={`start-button-${fileName}`}>
        Start
      </button>
      {form && <ParamsDialog fileName={fileName} form={form} busy={busy} onChange={setForm} problem={problem} onCancel={() => { setForm(null); setProblem(''); }} onSubmit={() => void start(paramsBody(form), true)} />}
    </>
  );
}

interface DialogProps {
  fileName: string;
  form: ParamForm;
  busy: boolean;
  problem: string;
  onChange: (form: ParamForm) => void;
  onCancel: () => void;
  onSubmit: () => void;
}

function ParamsDialog({ fileName, form, busy, problem, onChange, onCancel, onSubmit }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    // A modal dialog keeps focus inside and closes on Escape; older browsers show it inline.
    if (dialog && typeof dialog.showModal === 'function' && !dialog.open) dialog.showModal();
    else dialog?.setAttribute('open', '');
    return () => dialog?.close?.();
  }, []);
  const titleId = `start-title-${fileName}`;
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} data-testid="params-dialog" onCancel={(e) => { e.preventDefault(); onCancel(); }}>
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); onSubmit(); }}>
        <h2 id={titleId}>Start {fileName}</h2>
        {form.kind === 'fields' && form.fields.map((field, i) => (
          <label class="field" key={field.name}>
            <span>{/^[0-9]+$/.test(field.name) ? `Positional $${field.name}` : field.name}</span>
            <input
              name={field.name}
              value={field.value}
              data-testid={`param-${field.name}`}
              onInput={(e) => {
                const fields = form.fields.slice();
                fields[i] = { name: field.name, value: e.currentTarget.value };
                onChange({ kind: 'fields', fields });
              }}
            />
          </label>
        ))}
        {form.kind === 'text' && (
          <label class="field">
            <span>Parameters</span>
            <input value={form.text} data-testid="param-text" onInput={(e) => onChange({ kind: 'text', text: e.currentTarget.value })} />
          </label>
        )}
        <div role="alert">{problem && <p class="alert" data-testid="params-error">{problem}</p>}</div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy} data-testid="params-submit">Start</button>
          <button type="button" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </dialog>
  );
}

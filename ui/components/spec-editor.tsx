// A DAG's YAML in a textarea with line numbers, validated by the server as one types (after a
// pause), and saved with PUT. A spec with problems is not saved by the server, so Save says so.
// Without the write permission it is read-only, and Save is not offered.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, path } from '../api';
import { reportError } from '../alerts';
import { lineRange, problems, type Problem } from '../spec-problems';
import type { ValidateAnswer } from '../types';
import { useCan } from '../session';

interface Props { fileName: string; initial: string; onSaved: () => void }

export function SpecEditor({ fileName, initial, onSaved }: Props) {
  const writable = useCan('write');
  const [text, setText] = useState(initial);
  const [saved, setSaved] = useState(initial);
  const [issues, setIssues] = useState<Problem[] | null>(null);
  const [checking, setChecking] = useState(false);
  const [saving, setSaving] = useState(false);
  const [note, setNote] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLPreElement>(null);
  const generation = useRef(0);

  useEffect(() => {
    const mine = ++generation.current;
    setChecking(true);
    const timer = setTimeout(() => {
      api<ValidateAnswer>('POST', '/dags/validate', { spec: text, name: fileName }).then(
        (answer) => {
          if (mine === generation.current) setIssues(problems(answer.errors));
        },
        (error: unknown) => {
          if (mine === generation.current) reportError(error);
        },
      ).finally(() => {
        if (mine === generation.current) setChecking(false);
      });
    }, 400);
    return () => clearTimeout(timer);
  }, [text, fileName]);

  const save = async () => {
    setSaving(true);
    setNote('');
    try {
      const answer = await api<{ errors: string[] }>('PUT', path`/dags/${fileName}/spec`, { spec: text });
      if (answer.errors.length) {
        setIssues(problems(answer.errors));
        setNote('Not saved: the definition has problems (listed below).');
      } else {
        setSaved(text);
        setNote('Saved.');
        onSaved();
      }
    } catch (error) {
      reportError(error);
    } finally {
      setSaving(false);
    }
  };

  const goToLine = (line: number) => {
    const el = area.current;
    if (!el) return;
    const [start, end] = lineRange(el.value, line);
    el.focus();
    el.setSelectionRange(start, end);
  };

  const lineCount = text.split('\n').length;
  const dirty = text !== saved;
  // The lines a problem names are marked in the gutter, beside the text they are about.
  const badLines = new Set((issues ?? []).map((p) => p.line).filter((line): line is number => line !== null));
  return (
    <div class="spec">
      <div class="editor">
        <pre class="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => {
            const line = i + 1;
            const text = `${line}${line < lineCount ? '\n' : ''}`;
            return badLines.has(line) ? <span key={line} class="bad-line" data-testid={`spec-bad-line-${line}`} title="A problem is on this line">{text}</span> : text;
          })}
        </pre>
        <textarea
          ref={area}
          value={text}
          wrap="off"
          readOnly={!writable}
          spellcheck={false}
          autocomplete="off"
          aria-label={`Definition of ${fileName} (YAML; Ctrl+S saves)`}
          aria-describedby="spec-status"
          data-testid="spec-editor"
          onInput={(e) => {
            setText(e.currentTarget.value);
            setNote('');
          }}
          onKeyDown={(e) => {
            if ((e.ctrlKey || e.metaKey) && e.key === 's') {
              e.preventDefault();
              if (writable && text !== saved && !saving) void save();
            }
          }}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      <div class="toolbar">
        {writable && (
          <>
            <button type="button" class="primary" disabled={saving || !dirty} onClick={() => void save()} data-testid="save-spec">
              {saving ? 'Saving…' : 'Save'}
            </button>
            <button type="button" disabled={!dirty} onClick={() => setText(saved)}>Discard changes</button>
          </>
        )}
        {!writable && <span class="muted" data-testid="spec-read-only">Read-only: your role may not edit definitions.</span>}
        <span id="spec-status" aria-live="polite" class="muted">
          {note && <span data-testid="spec-saved">{note} </span>}
          {checking ? 'Checking…' : issues && issues.length === 0 ? <span data-testid="spec-valid" class="ok">Valid.</span> : ''}
        </span>
      </div>
      {issues && issues.length > 0 && (
        <ul class="problems" data-testid="spec-errors" aria-label="Problems in the definition">
          {issues.map((p, i) => (
            <li key={i}>
              {p.line !== null && (
                <button type="button" class="link-button" onClick={() => goToLine(p.line!)} aria-label={`Go to line ${p.line}`}>Line {p.line}</button>
              )}{' '}
              <span>{p.text}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

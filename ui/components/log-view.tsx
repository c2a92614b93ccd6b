// A step's stdout or stderr, followed live until the step ends. ANSI colours become styled
// spans; every line is a text node, so a log can never inject markup.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { parseAnsi, plain, type AnsiState, type Segment } from '../ansi';
import { followLog } from '../live';

interface Line { id: number; segments: Segment[] }

// A page holds at most this many lines; older ones are dropped from the view (the file keeps them).
const maxLines = 5000;

export function LogView({ name, dagRunId, subDagRunId, step, stream }: { name: string; dagRunId: string; subDagRunId?: string; step: string; stream: 'stdout' | 'stderr' }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [dropped, setDropped] = useState(0);
  const [state, setState] = useState<'following' | 'ended' | 'failed'>('following');
  const [endLabel, setEndLabel] = useState('');
  const view = useRef<HTMLPreElement>(null);
  // Reading at the bottom follows new lines, as `tail -f` does; scrolled up, the view stays put.
  const atBottom = useRef(true);

  useEffect(() => {
    setLines([]);
    setDropped(0);
    setState('following');
    setEndLabel('');
    let ansi: AnsiState = plain;
    let nextId = 0;
    let all: Line[] = [];
    let droppedCount = 0;
    const sub = subDagRunId ? `/sub-dag-runs/${encodeURIComponent(subDagRunId)}` : '';
    const url = `/api/v2/dag-runs/${encodeURIComponent(name)}/${encodeURIComponent(dagRunId)}${sub}/steps/${encodeURIComponent(step)}/log/stream?stream=${stream}`;
    return followLog(url, {
      onLines(texts) {
        const el = view.current;
        atBottom.current = !el || el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        for (const text of texts) {
          const { segments, end } = parseAnsi(text, ansi);
          ansi = end;
          all.push({ id: nextId++, segments });
        }
        if (all.length > maxLines) {
          droppedCount += all.length - maxLines;
          all = all.slice(all.length - maxLines);
          setDropped(droppedCount);
        }
        setLines(all.slice());
      },
      onEnd(label) {
        setEndLabel(label);
        setState('ended');
      },
      onError(message) {
        setEndLabel(message);
        setState('failed');
      },
    });
  }, [name, dagRunId, subDagRunId, step, stream]);

  useLayoutEffect(() => {
    const el = view.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [lines]);

  return (
    <div class="log">
      <p class="muted small" aria-live="polite" data-testid="log-state">
        {state === 'following' && 'Following the log…'}
        {state === 'ended' && `End of log${endLabel ? ` (step ${endLabel.replace(/_/g, ' ')})` : ''}.`}
        {state === 'failed' && endLabel}
        {dropped > 0 && ` ${dropped} earlier lines not shown.`}
      </p>
      <pre ref={view} class="log-view" role="region" data-testid="log-view" data-state={state} tabIndex={0} aria-label={`${stream} of step ${step}`}>
        {lines.length === 0 && state !== 'following' ? <span class="muted">(empty)</span> : lines.map((line) => (
          <div class="log-line" key={line.id}>
            {line.segments.map((seg, i) => (
              <span key={i} class={[seg.fg !== null ? `ansi-${seg.fg}` : '', seg.bold ? 'ansi-bold' : ''].join(' ').trim() || undefined}>{seg.text}</span>
            ))}
            {line.segments.length === 0 && '\n'}
          </div>
        ))}
      </pre>
    </div>
  );
}

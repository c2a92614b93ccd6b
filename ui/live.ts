// Live updates from the server's Server-Sent Events (docs/events.md). Pages do not apply
// events to what they show: an event only says "this changed", and the page reads the API
// again, so what is shown is always the API's answer.
import { useEffect, useRef } from 'preact/hooks';

// Events are sent with their type as the SSE event name, so each must be listened to by name.
const runTypes = ['run.running', 'run.succeeded', 'run.failed', 'run.aborted', 'run.queued', 'run.partially_succeeded'];
const stepTypes = ['step.running', 'step.succeeded', 'step.failed', 'step.aborted', 'step.skipped', 'step.not_started', 'step.partially_succeeded'];
const dagTypes = ['dag.created', 'dag.updated', 'dag.renamed', 'dag.deleted', 'dag.suspended', 'dag.resumed'];
const queueTypes = ['queue.limit_changed'];

const kinds: Record<string, string[]> = { run: runTypes, step: stepTypes, dag: dagTypes, queue: queueTypes };

export interface EventFilter { dagName?: string; dagRunId?: string; kinds: ('run' | 'step' | 'dag' | 'queue')[] }

/**
 * Calls `onChange` (at most every `delayMs`) after events matching the filter, after a `reset`
 * (events were missed), and once the stream is open. The browser reconnects by itself and resumes with Last-Event-ID.
 */
export function useLiveRefresh(filter: EventFilter | null, onChange: () => void, delayMs = 250): void {
  const callback = useRef(onChange);
  callback.current = onChange;
  const key = filter ? JSON.stringify(filter) : '';
  useEffect(() => {
    if (!filter || typeof EventSource === 'undefined') return;
    const params = new URLSearchParams();
    if (filter.dagName) params.set('dagName', filter.dagName);
    if (filter.dagRunId) params.set('dagRunId', filter.dagRunId);
    params.set('types', filter.kinds.map((k) => `${k}.*`).join(','));
    const source = new EventSource(`/api/v2/events?${params}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A burst of events (a run's steps) costs one re-read.
    const schedule = () => {
      if (timer === undefined) timer = setTimeout(() => {
        timer = undefined;
        callback.current();
      }, delayMs);
    };
    const names = [...filter.kinds.flatMap((k) => kinds[k]), 'reset'];
    for (const name of names) source.addEventListener(name, schedule);
    // The page read the API before the stream was open: what changed in between (a short run
    // that ended) sent no event this stream saw. A reconnection's gap is covered the same way.
    source.addEventListener('open', schedule);
    return () => {
      clearTimeout(timer);
      source.close();
    };
  }, [key, delayMs]);
}

export interface LogHandlers {
  onLines(lines: string[]): void;
  onEnd(statusLabel: string): void;
  onError(message: string): void;
}

/** Follows a step's log; lines arriving together are handed over in one batch. Returns a stop function. */
export function followLog(url: string, handlers: LogHandlers): () => void {
  const source = new EventSource(url);
  let pending: string[] = [];
  let frame: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    frame = undefined;
    const lines = pending;
    pending = [];
    if (lines.length) handlers.onLines(lines);
  };
  source.addEventListener('message', (event) => {
    pending.push((event as MessageEvent<string>).data);
    if (frame === undefined) frame = setTimeout(flush, 50);
  });
  source.addEventListener('end', (event) => {
    // The server closes the stream after `end`; closing first keeps the browser from reconnecting.
    source.close();
    clearTimeout(frame);
    flush();
    let label = '';
    try {
      label = (JSON.parse((event as MessageEvent<string>).data) as { statusLabel?: string }).statusLabel ?? '';
    } catch {
      label = '';
    }
    handlers.onEnd(label);
  });
  source.addEventListener('error', (event) => {
    // A server's `event: error` carries the error document; a failed connection carries nothing.
    const data = (event as MessageEvent<string>).data;
    if (typeof data === 'string' && data) {
      source.close();
      try {
        handlers.onError((JSON.parse(data) as { message?: string }).message ?? data);
      } catch {
        handlers.onError(data);
      }
    } else if (source.readyState === EventSource.CLOSED) {
      handlers.onError('The log stream could not be opened (the step may not exist, or sign-in is required).');
    }
  });
  return () => {
    clearTimeout(frame);
    source.close();
  };
}

// A small history-API router: the server answers index.html for every page path, and the page
// routes itself from location.pathname. Clicks on same-origin links to known pages are taken
// over here; any other link (the API, the OIDC sign-in) loads as usual.
import { useEffect, useRef, useState } from 'preact/hooks';

export type Route =
  | { page: 'dags' }
  | { page: 'dag'; fileName: string }
  | { page: 'runs' }
  | { page: 'run'; name: string; dagRunId: string; subDagRunId?: string }
  | { page: 'queues' }
  | { page: 'system' }
  | { page: 'login' }
  | { page: 'users' }
  | { page: 'api-keys' };

export function match(pathname: string): Route | undefined {
  const parts = pathname.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [head, a, b, c, d] = parts;
  if (parts.length === 0 || (head === 'dags' && parts.length === 1)) return { page: 'dags' };
  if (head === 'dags' && parts.length === 2) return { page: 'dag', fileName: a };
  if (head === 'runs' && parts.length === 1) return { page: 'runs' };
  if (head === 'runs' && parts.length === 3) return { page: 'run', name: a, dagRunId: b };
  // A sub DAG run is reached through its root run (the API finds it at any depth below).
  if (head === 'runs' && parts.length === 5 && c === 'sub') return { page: 'run', name: a, dagRunId: b, subDagRunId: d };
  if (head === 'queues' && parts.length === 1) return { page: 'queues' };
  if (head === 'system' && parts.length === 1) return { page: 'system' };
  if (parts.length === 1 && (head === 'login' || head === 'users' || head === 'api-keys')) return { page: head };
  return undefined;
}

export interface Location { pathname: string; search: URLSearchParams }

const listeners = new Set<() => void>();

function current(): Location {
  return { pathname: location.pathname, search: new URLSearchParams(location.search) };
}

export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** Rewrites the query of the current page without a new history entry (filters, paging). */
export function setQuery(params: Record<string, string | number | undefined>): void {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  navigate(location.pathname + (text ? `?${text}` : ''), { replace: true });
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

export function startLinkInterception(): void {
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.('a');
    if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
    const url = new URL(anchor.href, location.href);
    if (url.origin !== location.origin || !match(url.pathname)) return;
    event.preventDefault();
    if (url.pathname + url.search !== location.pathname + location.search) navigate(url.pathname + url.search);
    scrollTo(0, 0);
  });
}

export const href = {
  dag: (fileName: string) => `/dags/${encodeURIComponent(fileName)}`,
  run: (name: string, dagRunId: string) => `/runs/${encodeURIComponent(name)}/${encodeURIComponent(dagRunId)}`,
  subRun: (rootName: string, rootDagRunId: string, subDagRunId: string) => `${href.run(rootName, rootDagRunId)}/sub/${encodeURIComponent(subDagRunId)}`,
  runs: (name?: string) => (name ? `/runs?name=${encodeURIComponent(name)}` : '/runs'),
};

/**
 * A search box over a query parameter: what is typed goes to the address (`push`) once typing has
 * paused for `delayMs`, made `clean` first; back and forward change the box to the address's value,
 * unless it is what the box itself just set.
 */
export function useTypedQuery(value: string, push: (typed: string) => void, delayMs: number, clean: (typed: string) => string = (typed) => typed): [string, (typed: string) => void] {
  const [typed, setTyped] = useState(value);
  const pushed = useRef(value);
  useEffect(() => {
    if (typed === value) return;
    const timer = setTimeout(() => {
      pushed.current = clean(typed);
      push(pushed.current);
    }, delayMs);
    return () => clearTimeout(timer);
  }, [typed]);
  useEffect(() => {
    if (value !== pushed.current) {
      pushed.current = value;
      setTyped(value);
    }
  }, [value]);
  return [typed, setTyped];
}

// The layout: the top navigation, the alert region and the page the location names.
import { useEffect, useRef } from 'preact/hooks';
import { clearAlerts } from './alerts';
import { match, useLocation } from './router';
import { AlertRegion } from './components/alert-region';
import { DagsPage } from './pages/dags';
import { DagPage } from './pages/dag';
import { RunsPage } from './pages/runs';
import { RunPage } from './pages/run';
import { QueuesPage } from './pages/queues';
import { SystemPage } from './pages/system';

const links = [
  { href: '/dags', label: 'DAGs', pages: ['dags', 'dag'] },
  { href: '/runs', label: 'Runs', pages: ['runs', 'run'] },
  { href: '/queues', label: 'Queues', pages: ['queues'] },
  { href: '/system', label: 'System', pages: ['system'] },
];

export function App() {
  const loc = useLocation();
  const route = match(loc.pathname);
  const first = useRef(true);
  useEffect(() => {
    clearAlerts();
    // After a navigation, focus goes to the new page, as a full page load would put it.
    if (first.current) first.current = false;
    else document.getElementById('main')?.focus();
  }, [loc.pathname]);
  useEffect(() => {
    document.title = route ? `${titles[route.page]} · troupe` : 'Not found · troupe';
  }, [route?.page]);

  let page;
  switch (route?.page) {
    case 'dags': page = <DagsPage loc={loc} />; break;
    case 'dag': page = <DagPage key={route.fileName} fileName={route.fileName} />; break;
    case 'runs': page = <RunsPage loc={loc} />; break;
    case 'run': page = <RunPage key={`${route.name}/${route.dagRunId}/${route.subDagRunId ?? ''}`} name={route.name} dagRunId={route.dagRunId} subDagRunId={route.subDagRunId} loc={loc} />; break;
    case 'queues': page = <QueuesPage />; break;
    case 'system': page = <SystemPage />; break;
    default: page = <section><h1>Not found</h1><p>No page here. <a href="/dags">See the DAGs.</a></p></section>;
  }

  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/dags" aria-label="troupe home">troupe</a>
        <nav aria-label="Main" data-testid="main-nav">
          {links.map((link) => (
            <a key={link.href} href={link.href} data-testid={`nav-${link.label.toLowerCase()}`} aria-current={route && link.pages.includes(route.page) ? 'page' : undefined}>
              {link.label}
            </a>
          ))}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <AlertRegion />
        {page}
      </main>
    </>
  );
}

const titles: Record<string, string> = { dags: 'DAGs', dag: 'DAG', runs: 'Runs', run: 'Run', queues: 'Queues', system: 'System' };

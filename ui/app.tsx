// The layout: the top navigation (with who is signed in), the alert region and the page the location names.
import { useEffect, useRef } from 'preact/hooks';
import { api } from './api';
import { clearAlerts, reportError } from './alerts';
import { match, navigate, useLocation } from './router';
import { can, loadSession, loginHref, useSession, type Permission } from './session';
import { AlertRegion } from './components/alert-region';
import { DagsPage } from './pages/dags';
import { DagPage } from './pages/dag';
import { RunsPage } from './pages/runs';
import { RunPage } from './pages/run';
import { QueuesPage } from './pages/queues';
import { SystemPage } from './pages/system';
import { LoginPage } from './pages/login';
import { UsersPage } from './pages/users';
import { ApiKeysPage } from './pages/api-keys';

const links: { href: string; label: string; testId: string; pages: string[]; needs: Permission }[] = [
  { href: '/dags', label: 'DAGs', testId: 'nav-dags', pages: ['dags', 'dag'], needs: 'read' },
  { href: '/runs', label: 'Runs', testId: 'nav-runs', pages: ['runs', 'run'], needs: 'read' },
  { href: '/queues', label: 'Queues', testId: 'nav-queues', pages: ['queues'], needs: 'read' },
  { href: '/system', label: 'System', testId: 'nav-system', pages: ['system'], needs: 'read' },
  { href: '/users', label: 'Users', testId: 'nav-users', pages: ['users'], needs: 'admin' },
  { href: '/api-keys', label: 'API keys', testId: 'nav-api-keys', pages: ['api-keys'], needs: 'admin' },
];

export function App() {
  const loc = useLocation();
  const session = useSession();
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
    case 'login': page = <LoginPage loc={loc} />; break;
    case 'users': page = <UsersPage />; break;
    case 'api-keys': page = <ApiKeysPage />; break;
    default: page = <section><h1>Not found</h1><p>No page here. <a href="/dags">See the DAGs.</a></p></section>;
  }

  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/dags" aria-label="troupe home">troupe</a>
        <nav aria-label="Main" data-testid="main-nav">
          {links.filter((link) => link.needs === 'read' || can(link.needs, session)).map((link) => (
            <a key={link.href} href={link.href} data-testid={link.testId} aria-current={route && link.pages.includes(route.page) ? 'page' : undefined}>
              {link.label}
            </a>
          ))}
        </nav>
        <SignedIn />
      </header>
      <main id="main" tabIndex={-1}>
        <AlertRegion />
        {/* Until the API says who this is, a page would show actions the role may not take. */}
        {session.state === 'loading' ? <p aria-live="polite">Loading…</p> : page}
      </main>
    </>
  );
}

const titles: Record<string, string> = {
  dags: 'DAGs', dag: 'DAG', runs: 'Runs', run: 'Run', queues: 'Queues', system: 'System', login: 'Sign in', users: 'Users', 'api-keys': 'API keys',
};

/** The user and role, and Sign out for a session (credentials that are no stored user, or auth off, have nothing to end). */
function SignedIn() {
  const session = useSession();
  if (session.state === 'loading') return null;
  if (session.state === 'signed-out') return <a class="account" href={loginHref()} data-testid="nav-sign-in">Sign in</a>;
  const signOut = async () => {
    try {
      await api('POST', '/auth/logout', {});
      await loadSession();
      navigate('/login');
    } catch (error) {
      reportError(error);
    }
  };
  return (
    <div class="account">
      <span data-testid="signed-in-user">{session.user.username || 'anonymous'} <span class="role">{session.user.role}</span></span>
      {session.user.id !== '' && <button type="button" class="link-button" data-testid="sign-out" onClick={() => void signOut()}>Sign out</button>}
    </div>
  );
}

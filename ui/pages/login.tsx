// Signing in: a username and password (POST /auth/login sets the HttpOnly session cookie), or the
// OIDC provider when the server has one. Success goes back to the page the visitor came from.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { loadSession, safeNext, useSession } from '../session';
import { navigate, type Location } from '../router';

const OIDC_LOGIN = '/api/v2/auth/oidc/login';

/** Whether the server signs in with an OIDC provider: GET /auth/methods says, changing nothing. */
async function oidcConfigured(): Promise<boolean> {
  try {
    return (await api<{ oidc: boolean }>('GET', '/auth/methods')).oidc;
  } catch {
    return false;
  }
}

export function LoginPage({ loc }: { loc: Location }) {
  const session = useSession();
  const next = safeNext(loc.search.get('next'), location.origin);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState('');
  const [oidc, setOidc] = useState(false);

  useEffect(() => {
    let live = true;
    void oidcConfigured().then((on) => live && setOidc(on));
    return () => void (live = false);
  }, []);

  const submit = async () => {
    setBusy(true);
    setProblem('');
    try {
      await api('POST', '/auth/login', { username, password });
      await loadSession();
      navigate(next, { replace: true });
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="login-title" class="login">
      <h1 id="login-title">Sign in</h1>
      {session.state === 'signed-in' && (
        <p class="muted">Signed in as {session.user.username} ({session.user.role}). <a href={next}>Go on</a></p>
      )}
      <form data-testid="login-form" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        <label class="field">
          <span>Username</span>
          <input name="username" autocomplete="username" required value={username} data-testid="login-username" onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span>Password</span>
          <input name="password" type="password" autocomplete="current-password" required value={password} data-testid="login-password" onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <div role="alert">{problem && <p class="alert" data-testid="login-error">{problem}</p>}</div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy} data-testid="login-submit">{busy ? 'Signing in…' : 'Sign in'}</button>
        </div>
      </form>
      {oidc && (
        <p>
          {/* A full page load: the provider's pages are not ours, and the callback ends at the server's clientUrl. */}
          <a href={OIDC_LOGIN} data-testid="login-oidc">Sign in with your organisation's account (OpenID Connect)</a>
        </p>
      )}
    </section>
  );
}

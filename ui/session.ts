// Who is signed in, read from GET /auth/me once at start and again after a sign-in or sign-out,
// and what their role lets them do. The pages only hide what the API would refuse: the API
// checks every request itself.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { can, type Permission, type Session, type SessionUser } from './permissions';

export { can, safeNext, type Permission, type Session, type SessionUser } from './permissions';

let session: Session = { state: 'loading' };
const listeners = new Set<(s: Session) => void>();

function publish(next: Session): void {
  session = next;
  for (const listener of listeners) listener(session);
}

/** Reads the caller again; a failure other than 401 (the server away) keeps what was known. */
export async function loadSession(): Promise<Session> {
  try {
    const answer = await api<{ user: SessionUser }>('GET', '/auth/me');
    publish({ state: 'signed-in', user: answer.user });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) publish({ state: 'signed-out' });
    else if (session.state === 'loading') publish({ state: 'signed-out' });
  }
  return session;
}

export function currentSession(): Session {
  return session;
}

export function useSession(): Session {
  const [value, setValue] = useState(session);
  useEffect(() => {
    listeners.add(setValue);
    setValue(session);
    return () => void listeners.delete(setValue);
  }, []);
  return value;
}

/** Whether the signed-in role may; re-renders its component when the session changes. */
export function useCan(permission: Permission): boolean {
  return can(permission, useSession());
}

export function loginHref(): string {
  const here = location.pathname + location.search;
  return here === '/' || here.startsWith('/login') ? '/login' : `/login?next=${encodeURIComponent(here)}`;
}

// Who is signed in, read from GET /auth/me once at start and again after a sign-in or sign-out,
// and what their role lets them do. The pages only hide what the API would refuse: the API
// checks every request itself.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';

export type Permission = 'read' | 'run' | 'write' | 'admin';
export interface SessionUser { id: string; username: string; role: string }

/** `loading` until the first answer; `signed-out` when the API wants credentials (401). */
export type Session =
  | { state: 'loading' }
  | { state: 'signed-out' }
  | { state: 'signed-in'; user: SessionUser };

// Each role may what the one before it may, and more (docs/auth.md, Roles).
const ranks: Record<string, number> = { viewer: 0, operator: 1, manager: 2, admin: 3 };
const needs: Record<Permission, number> = { read: 0, run: 1, write: 2, admin: 3 };

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

export function can(permission: Permission, current: Session = session): boolean {
  if (current.state !== 'signed-in') return false;
  return (ranks[current.user.role] ?? -1) >= needs[permission];
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

/** A `?next=` target kept to this site's own paths: one leading slash, never `//host` or `/\host`. */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || next.startsWith('/login')) return '/';
  // Whatever a browser would make of it (tabs and newlines dropped, backslashes as slashes) must stay here.
  const url = new URL(next, location.origin);
  return url.origin === location.origin ? url.pathname + url.search + url.hash : '/';
}

export function loginHref(): string {
  const here = location.pathname + location.search;
  return here === '/' || here.startsWith('/login') ? '/login' : `/login?next=${encodeURIComponent(here)}`;
}

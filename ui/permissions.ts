// What each role may (docs/auth.md, Roles) and where a sign-in may lead: pure, so tested without a browser.

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

export function can(permission: Permission, current: Session): boolean {
  if (current.state !== 'signed-in') return false;
  return (ranks[current.user.role] ?? -1) >= needs[permission];
}

/** A `?next=` target kept to this site's own paths: one leading slash, never `//host` or `/\host`. */
export function safeNext(next: string | null, origin: string): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || next.startsWith('/login')) return '/';
  // Whatever a browser would make of it (tabs and newlines dropped, backslashes as slashes) must stay here.
  const url = new URL(next, origin);
  return url.origin === origin ? url.pathname + url.search + url.hash : '/';
}


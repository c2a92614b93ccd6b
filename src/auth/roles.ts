// What each role may do: the permission every route declares, and the roles that hold it. Pure.
import { ROLES, type Role } from '../core/index.ts';

/**
 * `read`: every read, and the caller's own account (me, change-password); `run`: start, enqueue,
 * stop, retry, reschedule, dequeue, suspend, set a step's status; `write`: create, edit, rename and
 * delete DAGs, run an inline spec, change a queue's limit, remove run history; `admin`: users and API keys.
 */
export const PERMISSIONS = ['read', 'run', 'write', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Each role holds its own permission and every one below it: viewer < operator < manager < admin. */
const LEVEL: Record<Role, number> = { viewer: 0, operator: 1, manager: 2, admin: 3 };
const NEEDS: Record<Permission, number> = { read: 0, run: 1, write: 2, admin: 3 };

/** Dagu's `permissions` switches: off, nobody may do it, whatever their role (mode none too). */
export interface PermissionSwitches {
  writeDAGs: boolean;
  runDAGs: boolean;
}

export const ALL_PERMITTED: PermissionSwitches = { writeDAGs: true, runDAGs: true };

export function roleAllows(role: Role, permission: Permission): boolean {
  return LEVEL[role] >= NEEDS[permission];
}

/** The most powerful of `roles`, or undefined (an OIDC user's mapped groups). */
export function strongest(roles: readonly (Role | undefined)[]): Role | undefined {
  return roles.reduce<Role | undefined>((best, role) => (role !== undefined && (best === undefined || LEVEL[role] > LEVEL[best]) ? role : best), undefined);
}

/** Undefined when allowed; otherwise why not, for the 403's message. */
export function refusal(role: Role, permission: Permission, switches: PermissionSwitches = ALL_PERMITTED): string | undefined {
  if (permission === 'write' && !switches.writeDAGs) return 'writing DAGs is turned off on this server (permissions.writeDAGs)';
  if (permission === 'run' && !switches.runDAGs) return 'running DAGs is turned off on this server (permissions.runDAGs)';
  return roleAllows(role, permission) ? undefined : 'Insufficient permissions';
}

/** The roles that hold `permission`, lowest first. */
export function rolesWith(permission: Permission): Role[] {
  return [...ROLES].reverse().filter((role) => roleAllows(role, permission));
}

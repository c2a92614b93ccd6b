// Which role a sign-in's claims give, as Dagu decides it: roleAttributePath first, then the most
// powerful role among the user's mapped groups, else none (the caller gives defaultRole or refuses).
// Pure: the expression's result comes evaluated; nothing here writes a claim's value to a log.
import { isRole, type Role } from '../../core/index.ts';
import { strongest } from '../roles.ts';
import type { ExpressionResult } from './role-expression.ts';
import type { OidcRoleMapping } from './role-mapping-settings.ts';

export type MappedRole =
  | { role: Role; by: 'roleAttributePath' | 'groupMappings' }
  | { role: undefined; expressionProblem?: string };

/** `result`: roleAttributePath's over these claims, when it is set. */
export function mapRole(claims: Record<string, unknown>, mapping: OidcRoleMapping, result?: ExpressionResult): MappedRole {
  let expressionProblem: string | undefined;
  if (result) {
    if (result.kind === 'value') {
      // As Dagu: a string naming a role, in any case; anything else (null, "", "superuser") maps nothing.
      const role = typeof result.value === 'string' ? result.value.toLowerCase() : undefined;
      if (isRole(role)) return { role, by: 'roleAttributePath' };
    } else if (result.kind === 'error') {
      expressionProblem = result.message;
    }
  }
  const role = strongest(groupsOf(claims, mapping.groupsClaim).map((group) => (Object.hasOwn(mapping.groupMappings, group) ? mapping.groupMappings[group] : undefined)));
  if (role) return { role, by: 'groupMappings' };
  return { role: undefined, ...(expressionProblem ? { expressionProblem } : {}) };
}

/**
 * The groups in the claim `name`: a list of strings, or one string of names separated by spaces
 * (as some providers send them). A claim whose name holds dots (`https://example.com/groups`) is
 * taken whole when present; otherwise the dots reach into objects (`realm_access.roles`).
 */
export function groupsOf(claims: Record<string, unknown>, name: string): string[] {
  let value: unknown = claims[name];
  if (value === undefined) {
    value = claims;
    for (const part of name.split('.')) {
      value = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
    }
  }
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

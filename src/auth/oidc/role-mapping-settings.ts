// `auth.oidc.roleMapping` (Dagu's keys, camelCase or snake_case) and its TROUPE_AUTH_OIDC_*
// variables, read and checked before anything starts. The expression's syntax is checked where it
// is compiled (role-expression.ts), when the sign-in opens at start.
import { isRole, ROLES, type Role } from '../../core/index.ts';
import { flag as flagOf, mapOf, settingReader, text as textOf, unknownKey, type Fail } from './setting-values.ts';

export interface OidcRoleMapping {
  /** The claim holding the user's groups; a dotted path reaches into objects (`realm_access.roles`). */
  groupsClaim: string;
  /** An identity provider's group -> a troupe role; the most powerful of the user's groups wins. */
  groupMappings: Record<string, Role>;
  /** A jq expression over the claims whose first result names the role; tried before groupMappings. */
  roleAttributePath?: string;
  /** Refuse the sign-in when neither gives a role, rather than give defaultRole. */
  roleAttributeStrict: boolean;
  /** Map the role at a user's first sign-in only; later sign-ins keep the stored role. */
  skipOrgRoleSync: boolean;
}

export const DEFAULT_GROUPS_CLAIM = 'groups';

/** config.yaml key -> its snake_case spelling, its variable's suffix. */
const KEYS = {
  defaultRole: ['default_role', 'DEFAULT_ROLE'],
  groupsClaim: ['groups_claim', 'GROUPS_CLAIM'],
  groupMappings: ['group_mappings', 'GROUP_MAPPINGS'],
  roleAttributePath: ['role_attribute_path', 'ROLE_ATTRIBUTE_PATH'],
  roleAttributeStrict: ['role_attribute_strict', 'ROLE_ATTRIBUTE_STRICT'],
  skipOrgRoleSync: ['skip_org_role_sync', 'SKIP_ORG_ROLE_SYNC'],
} as const;
type Key = keyof typeof KEYS;

/**
 * `section`: the value of `roleMapping` (or `role_mapping`). The default role (viewer unless set)
 * and, when any group or expression setting is given, the mapping.
 */
export function readRoleMapping(section: unknown, env: Record<string, string | undefined>, fail: Fail): { defaultRole: Role; roleMapping?: OidcRoleMapping } {
  const file = mapOf(section, 'roleMapping must be a map (defaultRole, groupsClaim, groupMappings, roleAttributePath, roleAttributeStrict, skipOrgRoleSync)', fail);
  const unknown = unknownKey(file, KEYS);
  if (unknown !== undefined) throw fail(`roleMapping: unknown key "${unknown}" (known: ${Object.keys(KEYS).join(', ')})`);
  const read = settingReader(file, env, KEYS);
  // An empty value is an absent one here, whatever its kind.
  const value = (key: Key): unknown => {
    const raw = read(key);
    return raw === '' ? undefined : raw;
  };
  const text = (key: Key): string | undefined => textOf(value(key), `roleMapping.${key}`, fail) || undefined;
  const flag = (key: Key): boolean | undefined => flagOf(value(key), `roleMapping.${key}`, fail);

  const defaultRole = roleNamed(text('defaultRole'), 'roleMapping.defaultRole', fail) ?? 'viewer';
  const groupMappings = mappings(value('groupMappings'), fail);
  const roleAttributePath = text('roleAttributePath');
  const groupsClaim = text('groupsClaim');
  const roleAttributeStrict = flag('roleAttributeStrict');
  const skipOrgRoleSync = flag('skipOrgRoleSync');
  const mapped = Object.keys(groupMappings).length > 0 || roleAttributePath !== undefined;
  if (!mapped) {
    // Each would do nothing: refused, so that nobody believes it does.
    const idle = [groupsClaim !== undefined && 'groupsClaim', roleAttributeStrict !== undefined && 'roleAttributeStrict', skipOrgRoleSync !== undefined && 'skipOrgRoleSync'].find(Boolean);
    if (idle) throw fail(`roleMapping.${idle} does nothing without groupMappings or roleAttributePath`);
    return { defaultRole };
  }
  if (groupsClaim !== undefined && groupsClaim.split('.').some((part) => part === '')) throw fail(`roleMapping.groupsClaim "${groupsClaim}" has an empty part`);
  return {
    defaultRole,
    roleMapping: {
      groupsClaim: groupsClaim ?? DEFAULT_GROUPS_CLAIM,
      groupMappings,
      ...(roleAttributePath !== undefined ? { roleAttributePath } : {}),
      roleAttributeStrict: roleAttributeStrict ?? false,
      skipOrgRoleSync: skipOrgRoleSync ?? false,
    },
  };
}

/** A role name in any case (Dagu's `Admin` is `admin`); undefined when absent. */
function roleNamed(raw: string | undefined, key: string, fail: Fail): Role | undefined {
  if (raw === undefined) return undefined;
  const role = raw.toLowerCase();
  if (!isRole(role)) throw fail(`${key} must be one of ${ROLES.join(', ')}, not "${raw}"`);
  return role;
}

/**
 * A YAML map, or the variable's text: a JSON object (for group names holding commas or `=`, such as
 * LDAP DNs), else `group=role` pairs separated by commas.
 */
function mappings(raw: unknown, fail: Fail): Record<string, Role> {
  if (raw === undefined || raw === null) return {};
  let entries: [string, unknown][];
  if (typeof raw === 'string') {
    if (raw.trim().startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (error) {
        throw fail(`roleMapping.groupMappings is not a JSON object: ${(error as Error).message}`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail('roleMapping.groupMappings must be a JSON object of group: role');
      entries = Object.entries(parsed);
    } else {
      entries = raw.split(',').map((pair) => pair.trim()).filter(Boolean).map((pair) => {
        const at = pair.lastIndexOf('=');
        if (at <= 0) throw fail(`roleMapping.groupMappings: "${pair}" is not group=role`);
        return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      });
    }
  } else if (typeof raw === 'object' && !Array.isArray(raw)) {
    entries = Object.entries(raw);
  } else {
    throw fail('roleMapping.groupMappings must be a map of group: role');
  }
  // fromEntries: every group is a property of its own, `__proto__` and `constructor` included.
  return Object.fromEntries(entries.map(([group, role]) => {
    if (group === '') throw fail('roleMapping.groupMappings: a group name is empty');
    if (typeof role !== 'string' || role.trim() === '') throw fail(`roleMapping.groupMappings: group "${group}" must map to a role name (${ROLES.join(', ')})`);
    return [group, roleNamed(role.trim(), `roleMapping.groupMappings: group "${group}"`, fail)!];
  }));
}

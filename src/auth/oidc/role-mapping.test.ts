import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { strongest } from '../roles.ts';
import { groupsOf, mapRole } from './role-mapping.ts';
import type { OidcRoleMapping } from './role-mapping-settings.ts';

const mapping: OidcRoleMapping = {
  groupsClaim: 'groups', groupMappings: { admins: 'admin', devs: 'operator', readers: 'viewer' }, roleAttributeStrict: false, skipOrgRoleSync: false,
};

describe('OIDC role mapping', () => {
  test('groups: a list (strings only), a string of names separated by spaces, a dotted path, a claim named with dots taken whole', () => {
    assert.deepEqual(groupsOf({ groups: ['a', 1, 'b', null] }, 'groups'), ['a', 'b']);
    assert.deepEqual(groupsOf({ groups: ' a  b ' }, 'groups'), ['a', 'b']);
    assert.deepEqual(groupsOf({ realm_access: { roles: ['x'] } }, 'realm_access.roles'), ['x']);
    assert.deepEqual(groupsOf({ 'https://t.example/groups': ['y'], https: { x: 1 } }, 'https://t.example/groups'), ['y']);
    assert.deepEqual(groupsOf({ groups: { a: 1 } }, 'groups'), []);
    assert.deepEqual(groupsOf({ realm_access: ['roles'] }, 'realm_access.roles'), []);
    assert.deepEqual(groupsOf({}, 'toString'), []);
  });

  test('the most powerful role wins', () => {
    assert.equal(strongest(['viewer', undefined, 'operator']), 'operator');
    assert.equal(strongest(['viewer', 'admin', 'manager']), 'admin');
    assert.equal(strongest([undefined]), undefined);
    assert.deepEqual(mapRole({ groups: ['readers', 'admins', 'devs', 'other'] }, mapping), { role: 'admin', by: 'groupMappings' });
  });

  test('a group named like an Object property maps only when it is mapped', () => {
    assert.deepEqual(mapRole({ groups: ['constructor', '__proto__', 'toString'] }, mapping), { role: undefined });
    assert.deepEqual(mapRole({ groups: ['__proto__'] }, { ...mapping, groupMappings: Object.fromEntries([['__proto__', 'manager']]) }), { role: 'manager', by: 'groupMappings' });
  });

  test('the expression\'s role first (any case); a value that names no role, none, or an error leaves it to the groups', () => {
    const claims = { groups: ['admins'] };
    assert.deepEqual(mapRole(claims, mapping, { kind: 'value', value: 'Viewer' }), { role: 'viewer', by: 'roleAttributePath' });
    for (const value of ['superuser', '', null, 3, ['admin']]) {
      assert.deepEqual(mapRole(claims, mapping, { kind: 'value', value }), { role: 'admin', by: 'groupMappings' }, JSON.stringify(value));
    }
    assert.deepEqual(mapRole(claims, mapping, { kind: 'none' }), { role: 'admin', by: 'groupMappings' });
    assert.deepEqual(mapRole({}, mapping, { kind: 'error', message: 'boom' }), { role: undefined, expressionProblem: 'boom' });
  });
});

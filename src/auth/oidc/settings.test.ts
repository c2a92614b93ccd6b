import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readOidcSettings } from './settings.ts';

describe('auth.oidc settings', () => {
  const file = { clientId: 'troupe', clientSecret: 's3cret', clientUrl: 'https://troupe.example.com/', issuer: 'https://id.example.com' };

  test('absent, or without a client id and an issuer: OIDC login is off', () => {
    assert.equal(readOidcSettings(undefined, {}), undefined);
    assert.equal(readOidcSettings({ scopes: ['openid'] }, {}), undefined);
  });

  test('Dagu\'s keys with their defaults: the scopes, no lists, autoSignup on, role viewer', () => {
    assert.deepEqual(readOidcSettings(file, {}), {
      clientId: 'troupe', clientSecret: 's3cret', clientUrl: 'https://troupe.example.com', issuer: 'https://id.example.com',
      scopes: ['openid', 'profile', 'email'], whitelist: [], allowedDomains: [], autoSignup: true, defaultRole: 'viewer',
    });
  });

  test('lists, domains, autoSignup and roleMapping.defaultRole; snake_case keys read too', () => {
    const settings = readOidcSettings({
      client_id: 'troupe', client_url: 'http://localhost:8080', issuer: 'http://localhost:9000/realms/x', scopes: 'openid, email',
      whitelist: ['Alice@Example.com'], allowed_domains: ['@Corp.Example'], auto_signup: false, role_mapping: { default_role: 'operator' },
    }, {})!;
    assert.equal(settings.clientSecret, undefined);
    assert.deepEqual(settings.scopes, ['openid', 'email']);
    assert.deepEqual(settings.whitelist, ['alice@example.com']);
    assert.deepEqual(settings.allowedDomains, ['corp.example']);
    assert.equal(settings.autoSignup, false);
    assert.equal(settings.defaultRole, 'operator');
  });

  test('TROUPE_AUTH_OIDC_* variables win over the file; lists are comma-separated', () => {
    const settings = readOidcSettings(file, {
      TROUPE_AUTH_OIDC_CLIENT_ID: 'from-env', TROUPE_AUTH_OIDC_WHITELIST: 'a@x.org, b@y.org', TROUPE_AUTH_OIDC_ALLOWED_DOMAINS: 'z.org',
      TROUPE_AUTH_OIDC_AUTO_SIGNUP: 'false', TROUPE_AUTH_OIDC_DEFAULT_ROLE: 'manager', TROUPE_AUTH_OIDC_SCOPES: 'openid,profile',
    })!;
    assert.equal(settings.clientId, 'from-env');
    assert.deepEqual(settings.whitelist, ['a@x.org', 'b@y.org']);
    assert.deepEqual(settings.allowedDomains, ['z.org']);
    assert.equal(settings.autoSignup, false);
    assert.equal(settings.defaultRole, 'manager');
    assert.deepEqual(readOidcSettings(undefined, { TROUPE_AUTH_OIDC_CLIENT_ID: 'c', TROUPE_AUTH_OIDC_ISSUER: 'https://i.example', TROUPE_AUTH_OIDC_CLIENT_URL: 'https://t.example' })?.clientUrl, 'https://t.example');
  });

  test('roleMapping: groups and an expression with Dagu\'s defaults; role names in any case; snake_case keys', () => {
    assert.equal(readOidcSettings(file, {})!.roleMapping, undefined);
    assert.deepEqual(readOidcSettings({ ...file, roleMapping: { groupMappings: { 'ops-admins': 'Admin', 'cn=Leads,ou=Groups': 'manager' } } }, {})!.roleMapping, {
      groupsClaim: 'groups', groupMappings: { 'ops-admins': 'admin', 'cn=Leads,ou=Groups': 'manager' }, roleAttributeStrict: false, skipOrgRoleSync: false,
    });
    const snake = readOidcSettings({ ...file, role_mapping: {
      default_role: 'operator', groups_claim: 'realm_access.roles', role_attribute_path: ' .role ', role_attribute_strict: true, skip_org_role_sync: true,
    } }, {})!;
    assert.equal(snake.defaultRole, 'operator');
    assert.deepEqual(snake.roleMapping, { groupsClaim: 'realm_access.roles', groupMappings: {}, roleAttributePath: '.role', roleAttributeStrict: true, skipOrgRoleSync: true });
  });

  test('roleMapping from TROUPE_AUTH_OIDC_* variables: group mappings as group=role pairs or a JSON object (for names with commas)', () => {
    const pairs = readOidcSettings(file, { TROUPE_AUTH_OIDC_GROUP_MAPPINGS: 'ops-admins=admin, deployers = Operator', TROUPE_AUTH_OIDC_GROUPS_CLAIM: 'roles' })!;
    assert.deepEqual(pairs.roleMapping?.groupMappings, { 'ops-admins': 'admin', deployers: 'operator' });
    assert.equal(pairs.roleMapping?.groupsClaim, 'roles');
    const json = readOidcSettings({ ...file, roleMapping: { groupMappings: { ignored: 'viewer' } } }, {
      TROUPE_AUTH_OIDC_GROUP_MAPPINGS: '{"cn=ops,dc=example": "manager"}', TROUPE_AUTH_OIDC_ROLE_ATTRIBUTE_PATH: '.r',
      TROUPE_AUTH_OIDC_ROLE_ATTRIBUTE_STRICT: 'true', TROUPE_AUTH_OIDC_SKIP_ORG_ROLE_SYNC: '1',
    })!;
    assert.deepEqual(json.roleMapping, { groupsClaim: 'groups', groupMappings: { 'cn=ops,dc=example': 'manager' }, roleAttributePath: '.r', roleAttributeStrict: true, skipOrgRoleSync: true });
    for (const [value, message] of [['ops', /"ops" is not group=role/], ['{"ops": ', /not a JSON object/], ['{"ops": "root"}', /group "ops" must be one of/]] as const) {
      assert.throws(() => readOidcSettings(file, { TROUPE_AUTH_OIDC_GROUP_MAPPINGS: value }), message);
    }
  });

  test('a wrong setting is bad_request naming the key', () => {
    const wrong: Array<[unknown, RegExp]> = [
      [{ ...file, clientUrl: undefined }, /clientUrl .* is required/],
      [{ ...file, issuer: undefined }, /issuer is required/],
      [{ ...file, issuer: 'id.example.com' }, /issuer must be an http or https URL/],
      [{ ...file, scopes: ['profile'] }, /scopes must include openid/],
      [{ ...file, whitelist: [1] }, /whitelist must be a list of strings/],
      [{ ...file, autoSignup: 'yes' }, /autoSignup must be true or false/],
      [{ ...file, roleMapping: { defaultRole: 'root' } }, /defaultRole must be one of admin, manager, operator, viewer/],
      [{ ...file, roleMapping: { groupMapping: { ops: 'admin' } } }, /roleMapping: unknown key "groupMapping"/],
      [{ ...file, roleMapping: { groupMappings: { devs: 'developer' } } }, /roleMapping\.groupMappings: group "devs" must be one of admin, manager, operator, viewer, not "developer"/],
      [{ ...file, roleMapping: { groupMappings: { devs: '' } } }, /group "devs" must map to a role name/],
      [{ ...file, roleMapping: { groupMappings: ['ops'] } }, /groupMappings must be a map of group: role/],
      [{ ...file, roleMapping: { groupMappings: { ops: 'admin' }, roleAttributePath: 1 } }, /roleAttributePath must be a string/],
      [{ ...file, roleMapping: { groupMappings: { ops: 'admin' }, skipOrgRoleSync: 'sometimes' } }, /skipOrgRoleSync must be true or false/],
      [{ ...file, roleMapping: { roleAttributeStrict: true } }, /roleAttributeStrict does nothing without groupMappings or roleAttributePath/],
      [{ ...file, roleMapping: { groupsClaim: 'roles' } }, /groupsClaim does nothing without/],
      [{ ...file, roleMapping: { groupMappings: { ops: 'admin' }, groupsClaim: 'realm_access..roles' } }, /groupsClaim "realm_access\.\.roles" has an empty part/],
      [{ ...file, roleMapping: 'admin' }, /roleMapping must be a map/],
      [{ ...file, clientID: 'x' }, /unknown key "clientID"/],
      ['oidc', /must be a map/],
    ];
    for (const [section, message] of wrong) {
      assert.throws(() => readOidcSettings(section, {}), (error: Error & { code?: string }) => error.code === 'bad_request' && message.test(error.message), String(message));
    }
  });
});

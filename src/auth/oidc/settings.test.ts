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

  test('a wrong setting is bad_request naming the key', () => {
    const wrong: Array<[unknown, RegExp]> = [
      [{ ...file, clientUrl: undefined }, /clientUrl .* is required/],
      [{ ...file, issuer: undefined }, /issuer is required/],
      [{ ...file, issuer: 'id.example.com' }, /issuer must be an http or https URL/],
      [{ ...file, scopes: ['profile'] }, /scopes must include openid/],
      [{ ...file, whitelist: [1] }, /whitelist must be a list of strings/],
      [{ ...file, autoSignup: 'yes' }, /autoSignup must be true or false/],
      [{ ...file, roleMapping: { defaultRole: 'root' } }, /defaultRole must be one of admin, manager, operator, viewer/],
      [{ ...file, roleMapping: { groupMappings: {} } }, /unknown key "groupMappings"/],
      [{ ...file, clientID: 'x' }, /unknown key "clientID"/],
      ['oidc', /must be a map/],
    ];
    for (const [section, message] of wrong) {
      assert.throws(() => readOidcSettings(section, {}), (error: Error & { code?: string }) => error.code === 'bad_request' && message.test(error.message), String(message));
    }
  });
});

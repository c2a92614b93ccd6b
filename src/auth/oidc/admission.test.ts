import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { refusal } from './admission.ts';

describe('OIDC admission', () => {
  const lists = { whitelist: ['alice@example.com'], allowedDomains: ['corp.example'] };

  test('without a whitelist or domains every account is admitted, with or without an email', () => {
    assert.equal(refusal({ subject: 's' }, { whitelist: [], allowedDomains: [] }), undefined);
    assert.equal(refusal({ subject: 's', email: 'x@y.z', emailVerified: false }, { whitelist: [], allowedDomains: [] }), undefined);
  });

  test('a listed email or an email of an allowed domain is admitted, whatever its case', () => {
    assert.equal(refusal({ subject: 's', email: 'Alice@Example.com' }, lists), undefined);
    assert.equal(refusal({ subject: 's', email: 'bob@CORP.example', emailVerified: true }, lists), undefined);
  });

  test('others are refused: another address, a subdomain, no email, an unverified email', () => {
    assert.match(refusal({ subject: 's', email: 'mallory@example.com' }, lists)!, /not in the whitelist/);
    assert.match(refusal({ subject: 's', email: 'bob@evil.corp.example' }, lists)!, /not in the whitelist/);
    assert.match(refusal({ subject: 's', email: 'corp.example' }, lists)!, /not in the whitelist/);
    assert.match(refusal({ subject: 's' }, lists)!, /no email/);
    assert.match(refusal({ subject: 's', email: 'alice@example.com', emailVerified: false }, lists)!, /not verified/);
  });
});

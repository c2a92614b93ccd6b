import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authFor, registryHost } from './registry-auth.ts';

describe('registry auth selection', () => {
  it('reads the registry host of an image reference', () => {
    assert.equal(registryHost('alpine'), 'docker.io');
    assert.equal(registryHost('alpine:3.19'), 'docker.io');
    assert.equal(registryHost('team/app:1'), 'docker.io');
    assert.equal(registryHost('ghcr.io/team/app:1'), 'ghcr.io');
    assert.equal(registryHost('registry.local:5000/app'), 'registry.local:5000');
    assert.equal(registryHost('localhost/app@sha256:abc'), 'localhost');
    assert.equal(registryHost('localhost:5000/app:2'), 'localhost:5000');
  });

  it('picks the entry of the image\'s registry, with a port when it has one', () => {
    const auths = {
      'ghcr.io': { username: 'g', password: 'gp' },
      'registry.local:5000': { username: 'r', password: 'rp' },
      'registry.local': { username: 'noport', password: 'x' },
    };
    assert.deepEqual(authFor('ghcr.io/team/app:1', auths), { username: 'g', password: 'gp', serveraddress: 'ghcr.io' });
    assert.deepEqual(authFor('registry.local:5000/app', auths), { username: 'r', password: 'rp', serveraddress: 'registry.local:5000' });
    assert.equal(authFor('quay.io/x/y', auths), undefined);
    assert.equal(authFor('alpine', auths), undefined);
    assert.equal(authFor('alpine', undefined), undefined);
  });

  it('matches Docker Hub under any of its names', () => {
    for (const key of ['docker.io', 'index.docker.io', 'https://index.docker.io/v1/']) {
      assert.deepEqual(authFor('team/app', { [key]: { username: 'u', password: 'p' } }), { username: 'u', password: 'p', serveraddress: 'https://index.docker.io/v1/' });
    }
  });

  it('accepts a key written with a scheme', () => {
    assert.equal(authFor('ghcr.io/a/b', { 'https://ghcr.io': { username: 'u', password: 'p' } })?.username, 'u');
  });
});

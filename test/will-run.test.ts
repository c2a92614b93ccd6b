// "valid" means "will run". Validation, creation and a spec edit report what this
// server cannot carry out (packages without nix-shell) as problems; an empty spec is invalid, saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedServer } from './helpers.ts';

const server = sharedServer();
const PACKAGES = 'steps:\n  - name: s\n    command: jq --version\n    shellPackages: [jq]\n';

test('validate reports what this build cannot run; create refuses it; a spec edit lists it', async () => {
  const packages = await server.call('POST', '/dags/validate', { spec: PACKAGES });
  assert.equal(packages.status, 200);
  assert.equal(packages.body.valid, false);
  assert.deepEqual(packages.body.errors, ['steps.s.shellPackages: packages are installed by nix-shell: set shell: nix-shell']);

  const created = await server.call('POST', '/dags', { name: 'packaged', spec: PACKAGES });
  assert.equal(created.status, 400);
  assert.match(created.text, /shellPackages: packages are installed by nix-shell/);

  assert.equal((await server.call('POST', '/dags', { name: 'plain', spec: 'steps:\n  - echo plain\n' })).status, 201);
  const edited = await server.call('PUT', '/dags/plain/spec', { spec: PACKAGES });
  assert.equal(edited.status, 200);
  assert.deepEqual(edited.body.errors, ['steps.s.shellPackages: packages are installed by nix-shell: set shell: nix-shell']);
});

test('an empty spec is invalid, and the message says it is empty', async () => {
  for (const spec of ['', '   \n', '# only a comment\n']) {
    const response = await server.call('POST', '/dags/validate', { spec });
    assert.equal(response.body.valid, false, JSON.stringify(spec));
    assert.ok(response.body.errors.some((error: string) => /empty/.test(error)), `${JSON.stringify(spec)}: ${response.text}`);
  }
});

// The dashboard's session logic (ui/permissions.ts): what each role may, and where a sign-in may send
// the browser afterwards (this site's own pages only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { can, safeNext, type Session } from '../ui/permissions.ts';

const as = (role: string): Session => ({ state: 'signed-in', user: { id: 'u', username: 'u', role } });

test('each role may what docs/auth.md gives it, and nobody signed out may anything', () => {
  const table = (['viewer', 'operator', 'manager', 'admin'] as const).map((role) => (['read', 'run', 'write', 'admin'] as const).map((p) => can(p, as(role))));
  assert.deepEqual(table, [
    [true, false, false, false],
    [true, true, false, false],
    [true, true, true, false],
    [true, true, true, true],
  ]);
  assert.equal(can('read', { state: 'signed-out' }), false);
  assert.equal(can('read', { state: 'loading' }), false);
  assert.equal(can('read', as('unknown-role')), false);
});

test('?next= keeps a path of this site and sends anything else to /', () => {
  const origin = 'http://troupe.test:8080';
  assert.equal(safeNext('/runs/etl/1?step=a', origin), '/runs/etl/1?step=a');
  assert.equal(safeNext('/dags/a%20b', origin), '/dags/a%20b');
  for (const bad of [null, '', 'dags', '//evil.example/x', '/\\evil.example', 'https://evil.example/', '/\t/evil.example', '/login?next=/x', 'javascript:alert(1)']) {
    assert.equal(safeNext(bad, origin), '/', String(bad));
  }
});

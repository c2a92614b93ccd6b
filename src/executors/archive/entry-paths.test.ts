import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entryPath, goDuration, goFileMode, goTime, symlinkTarget } from './entry-paths.ts';

test('an entry path stays under the destination or is refused, naming the entry', () => {
  assert.deepEqual(entryPath('./a/b/'), { kind: 'ok', path: 'a/b' });
  assert.deepEqual(entryPath('a/../b'), { kind: 'ok', path: 'b' });
  assert.deepEqual(entryPath('./'), { kind: 'ok', path: '' });
  assert.deepEqual(entryPath('a/../../b'), { kind: 'refused', reason: 'entry "a/../../b" points outside the destination' });
  assert.deepEqual(entryPath('/etc/passwd'), { kind: 'refused', reason: 'entry "/etc/passwd" has an absolute path' });
  assert.deepEqual(entryPath('C:\\x'), { kind: 'refused', reason: 'entry "C:\\x" has an absolute path' });
});

test('a symlink target is relative and resolves, from the link\'s folder, under the destination', () => {
  assert.equal(symlinkTarget('d/l', 'd/l', '../x').kind, 'ok');
  assert.deepEqual(symlinkTarget('d/l', 'd/l', '../../x'), { kind: 'refused', reason: 'symlink "d/l" points outside the destination ("../../x")' });
  assert.deepEqual(symlinkTarget('l', 'l', '/etc'), { kind: 'refused', reason: 'symlink "l" points to the absolute path "/etc"' });
});

test('modes, times and durations print as Go prints them', () => {
  assert.deepEqual([goFileMode('file', 0o644), goFileMode('directory', 0o755), goFileMode('symlink', 0o777), goFileMode('file', 0o4755)], ['-rw-r--r--', 'drwxr-xr-x', 'Lrwxrwxrwx', 'urwxr-xr-x']);
  assert.deepEqual([goTime(new Date('2024-01-02T03:04:05.000Z')), goTime(new Date('2024-01-02T03:04:05.120Z'))], ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.12Z']);
  assert.deepEqual([goDuration(1.5), goDuration(2003), goDuration(0.25)], ['1.5ms', '2.003s', '250µs']);
});

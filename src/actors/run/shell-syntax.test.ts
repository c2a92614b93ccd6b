import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPosixShell, shebangOf, shellSegmentAt, shellSegments, type ShellContext } from './shell-syntax.ts';

/** The segments as [context, text] pairs, for short assertions. */
const cut = (code: string): Array<[ShellContext, string]> => shellSegments(code).map(({ context, text }) => [context, text]);

test('segments join back into the code', () => {
  const code = `echo 'a $X' "b $Y" c\\'d # it's $Z\ncat <<'EOF' | grep x\n$Q\nEOF\ndone`;
  assert.equal(shellSegments(code).map(({ text }) => text).join(''), code);
});

test('single and double quotes, escapes outside and inside them', () => {
  assert.deepEqual(cut(`a 'b "c' "d 'e\\" f" \\'g`), [
    ['code', 'a '], ['single', `'b "c'`], ['code', ' '], ['double', `"d 'e\\" f"`], ['code', ` \\'g`],
  ]);
});

test('a comment starts a word and ends its line; $# and a#b are not comments', () => {
  assert.deepEqual(cut(`echo $# a#b # don't $X\necho 'y'`), [
    ['code', 'echo $# a#b '], ['literal', `# don't $X`], ['code', '\necho '], ['single', `'y'`],
  ]);
});

test('here-documents: unquoted bodies expand like double quotes, quoted ones never', () => {
  assert.deepEqual(cut(`cat <<EOF\nit's $X\nEOF\ncat <<-'END'\n\t$Y\n\tEND\necho $Z`), [
    ['code', 'cat <<EOF\n'], ['double', `it's $X\n`], ['code', 'EOF\ncat <<-\'END\'\n'], ['literal', '\t$Y\n'], ['code', '\tEND\necho $Z'],
  ]);
  // A here-string is not a here-document.
  assert.deepEqual(cut(`cat <<< "$X"`), [['code', 'cat <<< '], ['double', '"$X"']]);
});

test('POSIX shells by name, path or through env; shebang lines as words', () => {
  assert.ok(isPosixShell(['sh']));
  assert.ok(isPosixShell(['/bin/bash', '-e']));
  assert.ok(isPosixShell(['/usr/bin/env', '-S', 'zsh']));
  assert.ok(!isPosixShell(['python3']));
  assert.ok(!isPosixShell(['/usr/bin/env', 'node']));
  assert.deepEqual(shebangOf('#!/usr/bin/env python3\nprint(1)'), ['/usr/bin/env', 'python3']);
  assert.equal(shebangOf('echo hi'), undefined);
});

test('the segment at an offset, looked up from left to right or again from the start', () => {
  const code = `a 'b' "c" # d`;
  const segmentAt = shellSegmentAt(shellSegments(code));
  assert.deepEqual([0, 3, 7, 11, 12].map((at) => segmentAt(at).context), ['code', 'single', 'double', 'literal', 'literal']);
  assert.equal(segmentAt(2).context, 'single');
});

test('a here-document body knows its delimiter; a comment has none', () => {
  const segments = shellSegments(`cat <<'END' # c\nbody\nEND\n`);
  assert.deepEqual(segments.filter((segment) => segment.context === 'literal').map((segment) => segment.delimiter), [undefined, 'END']);
});

test("bash's $'...' is single-quoted, a backslash escaping its quote", () => {
  assert.deepEqual(cut(`echo $'it\\'s # x' # $Y`), [['code', 'echo '], ['single', `$'it\\'s # x'`], ['code', ' '], ['literal', '# $Y']]);
});

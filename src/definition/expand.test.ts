// Variable references of definition format: variable references, table-driven.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateEnv, expandShellCode, expandVariables, type ExpandScope } from './expand.ts';

const values: Record<string, string> = {
  NAME: 'troupe', EMPTY: '', 1: 'first', 2: 'second',
  CONFIG: '{"db": {"host": "h1", "port": 5432}, "tags": ["a", "b"], "on": true, "off": null}', NUMBER: '7',
};
const scope: ExpandScope = {
  get: (name) => values[name],
  step: (id) => (id === 'build' ? { exitCode: 3, stdout: '/logs/build.out', stderr: '/logs/build.err' } : undefined),
};

const cases: Array<[string, string]> = [
  ['plain $NAME and ${NAME}', 'plain troupe and troupe'],
  ['positional $1 ${2}', 'positional first second'],
  ['${NAME:0:3}', 'tro'],
  ['${NAME:3}', 'upe'],
  ['${NAME:-3}', 'troupe'],
  ['${NAME:10:2}', ''],
  ['${EMPTY:-fallback} ${MISSING:-the $NAME}', 'fallback the troupe'],
  ['${CONFIG.db.host}:${CONFIG.db.port}', 'h1:5432'],
  ['${CONFIG.tags.1} ${CONFIG.tags} ${CONFIG.on}', 'b ["a","b"] true'],
  // A JSON value with nothing at the path: <nil>, as Dagu; a value that is not JSON, or none: as written.
  ['${CONFIG.nope} ${CONFIG.db.host.x} ${CONFIG.tags.5} ${CONFIG.off} ${NUMBER.x}', '<nil> <nil> <nil> <nil> <nil>'],
  ['${NAME.field} ${UNSET.field}', '${NAME.field} ${UNSET.field}'],
  ['${build.exitCode} ${build.stdout} ${build.stderr}', '3 /logs/build.out /logs/build.err'],
  ['$UNKNOWN ${UNKNOWN} ${other.exitCode}', '$UNKNOWN ${UNKNOWN} ${other.exitCode}'],
  // A step's result sliced, as Dagu slices it; an unknown step's stays as written.
  ['${build.stdout:0:5} ${build.stdout:6} ${build.exitCode:0:1} ${other.stdout:0:2}', '/logs build.out 3 ${other.stdout:0:2}'],
  ['no references at all', 'no references at all'],
];

for (const [text, expected] of cases) {
  test(`expands ${JSON.stringify(text)}`, () => {
    assert.equal(expandVariables(text, scope), expected);
  });
}

test('env entries are evaluated in order and see the earlier ones', () => {
  assert.deepEqual(evaluateEnv([['A', 'one'], ['B', '${A}-two'], ['C', '${B:0:3}${MISSING:-!}']], { BASE: 'b' }), { A: 'one', B: 'one-two', C: 'one!' });
});

const shellCases: Array<[string, string]> = [
  // A single quote directly before or after: as written.
  [`echo '$1' '\${NAME}' x'$NAME '$NAME'x`, `echo '$1' '\${NAME}' x'$NAME '$NAME'x`],
  // Not directly next to one: the value.
  [`echo 'a $NAME b'`, `echo 'a troupe b'`],
  // Except step results and JSON paths, which Dagu resolves apart.
  [`echo '\${build.exitCode}' '\${CONFIG.db.host}' '\${NAME:0:2}'`, `echo '3' 'h1' '\${NAME:0:2}'`],
  // Braced, directly between double quotes: escaped for them; otherwise as it is.
  ['echo "${CONFIG.db}" "$CONFIG" "x ${NAME}"', 'echo "{\\"host\\":\\"h1\\",\\"port\\":5432}" "{"db": {"host": "h1", "port": 5432}, "tags": ["a", "b"], "on": true, "off": null}" "x troupe"'],
  ['"${ODD}"', '"a\\\\b \\$HOME \\`x\\` \\"q\\""'],
];

for (const [text, expected] of shellCases) {
  test(`shell code ${JSON.stringify(text)}`, () => {
    assert.equal(expandShellCode(text, { ...scope, get: (name) => (name === 'ODD' ? 'a\\b $HOME `x` "q"' : scope.get(name)) }), expected);
  });
}

test('values are not shell code: quotes next to a reference change nothing', () => {
  assert.equal(expandVariables(`'$NAME' "\${NAME}"`, scope), `'troupe' "troupe"`);
});

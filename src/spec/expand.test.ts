// Variable references of workflow-format 7.1, table-driven.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateEnv, expandVariables, type ExpandScope } from './expand.ts';

const values: Record<string, string> = {
  NAME: 'troupe', EMPTY: '', 1: 'first', 2: 'second',
  CONFIG: '{"db": {"host": "h1", "port": 5432}, "tags": ["a", "b"], "on": true}',
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
  ['${CONFIG.nope} ${NAME.field}', '${CONFIG.nope} ${NAME.field}'],
  ['${build.exitCode} ${build.stdout} ${build.stderr}', '3 /logs/build.out /logs/build.err'],
  ['$UNKNOWN ${UNKNOWN} ${other.exitCode}', '$UNKNOWN ${UNKNOWN} ${other.exitCode}'],
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

// Preconditions, continueOn, retryPolicy and repeatPolicy in every form: the normalised model, or the
// exact errors with their paths and lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';

const base = { baseDir: '/dags', fileName: 'demo' };

/** A one-step DAG whose step carries `fields` (YAML lines indented under the step). */
function stepWith(fields: string): string {
  return `steps:\n  - name: s\n    command: "true"\n${fields.split('\n').map((line) => `    ${line}`).join('\n')}\n`;
}

const valid: Array<[string, string, (step: any) => unknown, unknown]> = [
  ['precondition as a command string', 'preconditions:\n  - test -f /etc/hosts', (s) => s.preconditions, [{ command: 'test -f /etc/hosts', negate: false }]],
  ['a single precondition without a list', 'preconditions: "test -d /tmp"', (s) => s.preconditions, [{ command: 'test -d /tmp', negate: false }]],
  ['precondition with condition, expected, error and negate', 'preconditions:\n  - condition: "`date +%u`"\n    expected: "re:[1-5]"\n    error: not a weekday\n    negate: true',
    (s) => s.preconditions, [{ condition: '`date +%u`', expected: 're:[1-5]', error: 'not a weekday', negate: true }]],
  ['precondition with a command', 'preconditions:\n  - command: "test -f x"', (s) => s.preconditions, [{ command: 'test -f x', negate: false }]],
  ['continueOn shorthand skipped', 'continueOn: skipped', (s) => s.continueOn, { failure: false, skipped: true, exitCode: [], output: [], markSuccess: false }],
  ['continueOn shorthand failed', 'continueOn: failed', (s) => s.continueOn, { failure: true, skipped: false, exitCode: [], output: [], markSuccess: false }],
  ['continueOn object', 'continueOn:\n  failure: true\n  exitCode: [1, 2]\n  output: ["WARN", "re:^E[0-9]+"]\n  markSuccess: true',
    (s) => s.continueOn, { failure: true, skipped: false, exitCode: [1, 2], output: ['WARN', 're:^E[0-9]+'], markSuccess: true }],
  ['continueOn with one exit code and one output', 'continueOn:\n  exitCode: 3\n  output: done', (s) => [s.continueOn.exitCode, s.continueOn.output], [[3], ['done']]],
  ['retryPolicy with backoff true', 'retryPolicy:\n  limit: 3\n  intervalSec: 2\n  backoff: true\n  maxIntervalSec: 30\n  exitCode: [1]',
    (s) => s.retryPolicy, { limit: 3, intervalSec: 2, backoff: 2, maxIntervalSec: 30, exitCode: [1] }],
  ['retryPolicy with a numeric backoff and exitCodes alias', 'retryPolicy:\n  limit: 2\n  backoff: 1.5\n  exitCodes: [7, 8]',
    (s) => s.retryPolicy, { limit: 2, intervalSec: 0, backoff: 1.5, exitCode: [7, 8] }],
  ['retryPolicy with backoff false', 'retryPolicy:\n  limit: 1\n  backoff: false', (s) => s.retryPolicy, { limit: 1, intervalSec: 0, exitCode: [] }],
  ['repeatPolicy while with a condition', 'repeatPolicy:\n  repeat: while\n  condition: "`cat flag`"\n  expected: "on"\n  limit: 5\n  intervalSec: 1',
    (s) => s.repeatPolicy, { repeat: 'while', condition: '`cat flag`', expected: 'on', exitCode: [], limit: 5, intervalSec: 1 }],
  ['repeatPolicy until with exit codes', 'repeatPolicy:\n  repeat: until\n  exitCode: [0]\n  backoff: 3\n  maxIntervalSec: 60',
    (s) => s.repeatPolicy, { repeat: 'until', exitCode: [0], intervalSec: 0, backoff: 3, maxIntervalSec: 60 }],
  ['repeatPolicy legacy true', 'repeatPolicy:\n  repeat: true\n  intervalSec: 10', (s) => s.repeatPolicy, { repeat: 'while', exitCode: [], intervalSec: 10 }],
  ['repeatPolicy without repeat: a condition with expected means until', 'repeatPolicy:\n  condition: "$X"\n  expected: "done"',
    (s) => s.repeatPolicy.repeat, 'until'],
  ['repeatPolicy without repeat: exit codes mean while', 'repeatPolicy:\n  exitCode: [1]', (s) => s.repeatPolicy.repeat, 'while'],
];

for (const [name, fields, pick, expected] of valid) {
  test(`valid: ${name}`, () => {
    const { dag, errors } = parseDag(stepWith(fields), base);
    assert.deepEqual(errors, []);
    assert.deepEqual(pick(dag!.steps[0]), expected);
  });
}

const invalid: Array<[string, string, string[]]> = [
  ['a precondition map without condition or command', 'preconditions:\n  - error: why', ['steps[0].preconditions[0] (line 5): needs a condition or a command']],
  ['expected without condition', 'preconditions:\n  - command: "true"\n    expected: yes', ['steps[0].preconditions[0].expected (line 6): needs a condition to compare']],
  ['a broken regular expression', 'preconditions:\n  - condition: "$A"\n    expected: "re:([a-"',
    ['steps[0].preconditions[0].expected (line 6): invalid regular expression: Invalid regular expression: /([a-/: Unterminated character class']],
  ['an unknown precondition key', 'preconditions:\n  - condition: "$A"\n    expect: x', ['steps[0].preconditions[0].expect (line 6): unknown field "expect"; did you mean "expected"?']],
  ['a continueOn shorthand that does not exist', 'continueOn: always', ['steps[0].continueOn (line 4): must be "skipped", "failed" or a map']],
  ['continueOn with a wrong type', 'continueOn:\n  failure: maybe\n  exitCode: [one]',
    ['steps[0].continueOn.failure (line 5): must be true or false', 'steps[0].continueOn.exitCode[0] (line 6): must be an integer']],
  ['backoff of 1.0', 'retryPolicy:\n  limit: 2\n  backoff: 1.0', ['steps[0].retryPolicy.backoff (line 6): must be greater than 1.0']],
  ['backoff below 1', 'retryPolicy:\n  limit: 2\n  backoff: 0.5', ['steps[0].retryPolicy.backoff (line 6): must be greater than 1.0']],
  ['backoff of the wrong type', 'retryPolicy:\n  backoff: fast', ['steps[0].retryPolicy.backoff (line 5): must be true or a number greater than 1.0']],
  ['exitCode and exitCodes together', 'retryPolicy:\n  exitCode: [1]\n  exitCodes: [2]', ['steps[0].retryPolicy.exitCodes (line 6): use exitCode or exitCodes, not both']],
  ['a negative retry limit', 'retryPolicy:\n  limit: -1', ['steps[0].retryPolicy.limit (line 5): must be at least 0']],
  ['repeat until with nothing to test', 'repeatPolicy:\n  repeat: until', ['steps[0].repeatPolicy.repeat (line 5): "until" needs a condition or exitCode']],
  ['an unknown repeat mode', 'repeatPolicy:\n  repeat: forever', ['steps[0].repeatPolicy.repeat (line 5): must be "while", "until" or true']],
  ['a repeatPolicy with nothing to repeat on', 'repeatPolicy:\n  intervalSec: 5', ['steps[0].repeatPolicy (line 4): needs repeat, a condition or exitCode']],
  ['a repeat limit of 0', 'repeatPolicy:\n  repeat: while\n  limit: 0', ['steps[0].repeatPolicy.limit (line 6): must be at least 1']],
];

for (const [name, fields, expected] of invalid) {
  test(`invalid: ${name}`, () => {
    assert.deepEqual(parseDag(stepWith(fields), base).errors, expected);
  });
}

test('DAG-level preconditions are read like a step\'s and shown in the DAG details shape', () => {
  const { dag, errors } = parseDag('preconditions:\n  - condition: "`date +%d`"\n    expected: "01"\n  - test -f /etc/hosts\nsteps:\n  - echo hi\n', base);
  assert.deepEqual(errors, []);
  assert.deepEqual(dag?.preconditions, [
    { condition: '`date +%d`', expected: '01', negate: false },
    { command: 'test -f /etc/hosts', negate: false },
  ]);
});

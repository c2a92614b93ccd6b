// YAML definitions for the fuzz suite: well-formed documents with values of the wrong kind, YAML's
// own features turned against the parser, and the known troublemakers, apart.
import fc from 'fast-check';
import { stringify } from 'yaml';

/** Commands a generated spec may run: started specs must not touch the file system. */
const SAFE_COMMANDS = ['true', 'false', 'echo hi', 'exit 3', 'printf x'];

/** Strings without backticks or `$(`: a definition's values can be commands, and these are only data. */
const text = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((value) => !value.includes('`') && !value.includes('$('));

const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('latest', '__proto__', '..', '/', '${HOME}', '', '~'));
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.dictionary(text, scalar, { maxKeys: 3 }));

const stepKeys = ['name', 'id', 'command', 'script', 'depends', 'output', 'dir', 'params', 'preconditions', 'continueOn', 'retryPolicy', 'repeatPolicy', 'executor', 'timeoutSec', 'call', 'run', 'env', 'signalOnStop', 'mailOnError', 'parallel'];
const dagKeys = ['name', 'description', 'tags', 'params', 'env', 'schedule', 'maxActiveRuns', 'maxActiveSteps', 'timeoutSec', 'delaySec', 'histRetentionDays', 'preconditions', 'handlerOn', 'queue', 'type', 'secrets', 'maxCleanUpTimeSec', 'group', 'steps'];

/** A step with its fields given values of any kind; commands stay inert. */
const step = fc.oneof(
  fc.constantFrom(...SAFE_COMMANDS),
  fc.tuple(fc.dictionary(fc.constantFrom(...stepKeys), value, { maxKeys: 4 }), fc.constantFrom(...SAFE_COMMANDS))
    .map(([fields, command]) => ({ ...fields, command })),
  value,
);

/** Documents that are YAML but not troupe definitions, or almost. Only for validate and create. */
export const structuredSpec: fc.Arbitrary<string> = fc.oneof(
  fc.record({ steps: fc.array(step, { maxLength: 4 }) }, { requiredKeys: [] }).chain((base) =>
    fc.dictionary(fc.constantFrom(...dagKeys.filter((key) => key !== 'steps')), value, { maxKeys: 4 }).map((extra) => stringify({ ...extra, ...base }))),
  value.map((doc) => stringify(doc)),
);

/** Specs that a run may start: only safe commands, shapes the parser must handle either way. */
export const runnableSpec: fc.Arbitrary<string> = fc.record({
  steps: fc.array(fc.record({
    name: fc.constantFrom('a', 'b', 'c', 'latest', '__proto__', 'x y', '日本'),
    command: fc.constantFrom(...SAFE_COMMANDS),
    depends: fc.constantFrom(undefined, [], ['a'], 'b', ['zz']),
    output: fc.constantFrom(undefined, 'OUT', '__proto__', 'constructor'),
  }, { requiredKeys: ['command'] }), { minLength: 1, maxLength: 4 }),
  params: fc.constantFrom(undefined, 'A=1', ['__proto__=1'], [{ constructor: 'x' }]),
  env: fc.constantFrom(undefined, ['A=1'], [{ __proto__x: 'y' }], { toString: 'x' }),
}, { requiredKeys: ['steps'] }).map((spec) => stringify(spec));

/** YAML features and malformed text: tags, anchors, documents, indentation, depth, size. */
export function hostileYaml(): string[] {
  return [
    '', '\n', '   ', '# only a comment\n', '---\n', '---\n...\n', '~', 'null', '[]', '{}', '42', '"steps"', 'steps:', 'steps: ~', 'steps: []', 'steps: {}',
    'steps:\n  - true\n---\nsteps:\n  - false\n',
    'steps:\n\t- true\n',
    'steps:\n  - !!binary aGVsbG8=\n',
    'steps:\n  - !!js/function "function(){}"\n',
    '!custom\nsteps:\n  - true\n',
    '%YAML 1.1\n---\nsteps:\n  - true\n',
    '%YAML 9.9\n---\nsteps:\n  - true\n',
    'steps:\n  - {name: a, command: true, name: b}\n',
    '? [a, b]\n: c\nsteps:\n  - true\n',
    'steps: [[[[[[[[true]]]]]]]]\n',
    'steps:\n  - name: a\n    command: true\n    depends: [a]\n',
    'steps:\n  - name: a\n    command: true\n    depends: [b]\n  - name: b\n    command: true\n    depends: [a]\n',
    `steps:\n  - name: a\n    command: true\n${'    '.repeat(1)}env:\n${Array.from({ length: 200 }, (_, i) => `      - K${i}: v`).join('\n')}\n`,
    `steps:${'\n  - true'.repeat(300)}\n`,
    `description: ${'x'.repeat(200_000)}\nsteps:\n  - true\n`,
    `${'['.repeat(2_000)}${']'.repeat(2_000)}`,
    // Deep enough to reach the stack's edge unless refused before parsing (found by this suite).
    '['.repeat(10_000), '['.repeat(50_000), `steps: ${'{a: '.repeat(30_000)}`, `${'- '.repeat(100_000)}x`, `${'? '.repeat(50_000)}x`,
    `${'a:\n '.repeat(1)}${Array.from({ length: 500 }, (_, i) => `${' '.repeat(i + 1)}k${i}:`).join('\n')}\n`,
    '\ufeffsteps:\n  - true\n',
    'steps:\n  - "\\u0000"\n',
    'steps:\n  - name: "\u202e"\n    command: true\n',
    'name: ../../escape\nsteps:\n  - true\n',
    'name: latest\nsteps:\n  - true\n',
    'name: __proto__\nsteps:\n  - true\n',
    'steps:\n  - call: ../../etc/passwd\n',
    'steps:\n  - call: __proto__\n',
    'steps:\n  - name: a\n    call: self-call\n---\nname: self-call\nsteps:\n  - call: self-call\n',
    'steps:\n  - call: loop-b\n---\nname: loop-b\nsteps:\n  - call: loop-c\n---\nname: loop-c\nsteps:\n  - call: loop-b\n',
    'steps:\n  - command: true\n    preconditions:\n      - condition: "${__proto__}"\n        expected: "re:("\n',
    'schedule: "* * * * * * * *"\nsteps:\n  - true\n',
    'schedule: ["61 25 32 13 8"]\nsteps:\n  - true\n',
    'timeoutSec: 1e309\nmaxActiveRuns: -99999999999999999999\nsteps:\n  - true\n',
    'params: "A=`x` B=$(y)"\nsteps:\n  - true\n',
    'secrets:\n  - name: S\n    provider: file\n    key: ../../../etc/shadow\nsteps:\n  - true\n',
    'dotenv: ../../../etc/passwd\nsteps:\n  - true\n',
    'logDir: ../../../outside\nworkingDir: ../../../outside\nsteps:\n  - true\n',
  ];
}

/** A few aliases, as an ordinary definition uses them: must answer without a 5xx, valid or not. */
export function ordinaryAliases(): string[] {
  const anchors = `defaults: &d\n  command: true\nsteps:\n${Array.from({ length: 100 }, (_, i) => `  - name: s${i}\n    <<: *d\n`).join('')}`;
  const merges = `base: &b {retryPolicy: {limit: 1}}\nsteps:\n${Array.from({ length: 300 }, (_, i) => `  - <<: *b\n    name: m${i}\n    command: true\n`).join('')}`;
  return [anchors, merges, 'x: &a [1]\nsteps:\n  - *a\n', 'steps: &s\n  - true\nhandlerOn:\n  exit: *s\n'];
}

/** Billion laughs: expansion far beyond any definition's need must be refused with a message. */
export function aliasBombs(): string[] {
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i);
    const next = String.fromCharCode(97 + i);
    levels.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  return [`${levels.join('\n')}\nsteps:\n  - true\n`, `x: &x {a: 1}\nsteps:\n${'  - *x\n'.repeat(400)}`];
}

/** A NUL byte where a definition names a file or directory. */
export function nulPaths(): string[] {
  return [
    'dotenv: "a\\0b.env"\nsteps:\n  - true\n',
    'dotenv: ["ok.env", "\\0"]\nsteps:\n  - true\n',
    'workingDir: "/tmp/\\0x"\nsteps:\n  - true\n',
    'logDir: "logs\\0x"\nsteps:\n  - true\n',
    'secrets:\n  - name: S\n    provider: file\n    key: "s\\0ecret"\nsteps:\n  - true\n',
    'steps:\n  - command: true\n    dir: "a\\0b"\n',
  ];
}

/** Specs with nothing in them: invalid, with a message. */
export const EMPTY_SPECS = ['', ' ', '\n\n', '# nothing\n', '---\n', '~\n', 'null\n'];

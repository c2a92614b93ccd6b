import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';

const base = { baseDir: '/dags', fileName: 'demo' };

test('generated step names go by an explicit executor, then a fan-out, a call, a script, a command', () => {
  const spec = [
    'steps:',
    '  - executor: jq',
    '    command: .a',
    '    script: \'{"a": 1}\'',
    '  - call: child',
    '    parallel: [a, b]',
    '  - call: child',
    '  - script: echo s',
    '  - command: |',
    '      echo one',
    '      echo two',
    '  - echo plain',
    '  - executor: shell',
    '    command: echo explicit',
  ].join('\n');
  const { dag } = parseDag(spec, base);
  assert.deepEqual(dag?.steps.map((s) => s.name), ['jq_1', 'parallel_2', 'dag_3', 'script_4', 'script_5', 'cmd_6', 'shell_7']);
});

test('a chain DAG gets implicit dependencies, generated names and defaults', () => {
  const { dag, errors } = parseDag('steps:\n  - echo one\n  - command: |\n      echo two\n      echo three\n  - name: last\n    command: echo last\n', base);
  assert.deepEqual(errors, []);
  assert.equal(dag?.name, 'demo');
  assert.deepEqual(dag?.steps.map((s) => [s.name, s.depends]), [['cmd_1', []], ['script_2', ['cmd_1']], ['last', ['script_2']]]);
  assert.equal(dag?.steps[1].script, 'echo two\necho three\n');
  assert.equal(dag?.maxActiveSteps, 1);
  assert.equal(dag?.maxActiveRuns, 1);
  assert.equal(dag?.workingDir, '/dags');
});

test('graph type keeps only explicit dependencies', () => {
  const { dag, errors } = parseDag('type: graph\nsteps:\n  - name: a\n    command: "true"\n  - name: b\n    command: "true"\n  - name: c\n    command: "true"\n    depends: [a, b]\n', base);
  assert.deepEqual(errors, []);
  assert.deepEqual(dag?.steps.map((s) => s.depends), [[], [], ['a', 'b']]);
});

test('nested arrays form parallel groups with the documented names', () => {
  const { dag, errors } = parseDag('steps:\n  - echo start\n  - - echo a\n    - echo b\n  - echo end\n', base);
  assert.deepEqual(errors, []);
  assert.deepEqual(dag?.steps.map((s) => [s.name, s.depends]), [
    ['cmd_1', []],
    ['parallel_2_echo_1', ['cmd_1']],
    ['parallel_2_echo_2', ['cmd_1']],
    ['cmd_4', ['parallel_2_echo_1', 'parallel_2_echo_2']],
  ]);
});

test('every problem is reported at once with its path and line', () => {
  const text = [
    'name: "bad name!"',
    'stepz: []',
    'maxActiveSteps: many',
    'steps:',
    '  - name: a',
    '    command: echo a',
    '    depends: [bulid]',
    '  - name: a',
    '    command: echo again',
    '',
  ].join('\n');
  const { errors } = parseDag(text, base);
  assert.deepEqual(errors, [
    'stepz (line 2): unknown field "stepz"; did you mean "steps"?',
    'name (line 1): name must only contain letters, digits, underscores, dots and hyphens',
    'maxActiveSteps (line 3): must be an integer',
    'steps[1] (line 8): duplicate step name "a"',
    'steps[0].depends (line 7): unknown step "bulid"',
  ]);
});

test('a dependency cycle is an error', () => {
  const { errors } = parseDag('type: graph\nsteps:\n  - name: a\n    command: x\n    depends: b\n  - name: b\n    command: y\n    depends: a\n', base);
  assert.deepEqual(errors, ['steps[0].depends (line 5): dependency cycle: a -> b -> a']);
});

test('YAML syntax errors carry their line', () => {
  const { dag, errors } = parseDag('steps: [[[', base);
  assert.equal(dag, undefined);
  assert.equal(errors.length > 0, true);
  assert.match(errors[0], /^line 1: /);
});

test('params and env keep their order; env may reference earlier entries later', () => {
  const { dag, errors } = parseDag('params:\n  - NAME: world\n  - COUNT: 3\nenv:\n  - A: one\n  - B: ${A}-two\nworkingDir: sub\nsteps:\n  - name: s\n    command: echo $NAME\n    dir: /tmp\n', base);
  assert.deepEqual(errors, []);
  assert.deepEqual(dag?.params, [{ name: 'NAME', value: 'world' }, { name: 'COUNT', value: '3' }]);
  assert.deepEqual(dag?.env, [['A', 'one'], ['B', '${A}-two']]);
  assert.equal(dag?.workingDir, '/dags/sub');
  assert.equal(dag?.steps[0].dir, '/tmp');
});

test('later documents are local DAGs', () => {
  const { localDags, errors } = parseDag('steps:\n  - echo main\n---\nname: child\nsteps:\n  - echo child\n', base);
  assert.deepEqual(errors, []);
  assert.deepEqual(localDags.map((l) => [l.name, l.errors]), [['child', []]]);
});

test('a call of a DAG that does not exist is no problem of the definition: it fails when it runs', () => {
  const text = [
    'steps:',
    '  - call: child',
    '  - name: lost',
    '    call: nowhere',
    '  - command: ghost',
    '    executor: dag',
    '---',
    'name: child',
    'steps:',
    '  - run: missing-too',
    '---',
    'name: child',
    'steps:',
    '  - echo twin',
    '',
  ].join('\n');
  const result = parseDag(text, base);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.localDags.map((local) => [local.name, local.errors]), [
    ['child', []],
    ['child', ['name (line 12): duplicate local DAG "child"']],
  ]);
});

test('param defaults with a reserved name or one that is no variable name are definition errors, each named', () => {
  for (const params of ['params:\n  - PATH: /x\n  - OK: 1\n', 'params:\n  PATH: /x\n  OK: 1\n', 'params: PATH=/x OK=1\n']) {
    const { errors } = parseDag(`${params}steps:\n  - echo hi\n`, base);
    assert.equal(errors.length, 1, params);
    assert.match(errors[0], /^params\.PATH.*param name reserved/);
  }
  const { errors } = parseDag('params: "a-b=1 LD_PRELOAD=x --flag=y"\nsteps:\n  - echo hi\n', base);
  assert.equal(errors.length, 2);
  assert.match(errors[0], /^params\.a-b.*: param name not a variable name/);
  assert.match(errors[1], /^params\.LD_PRELOAD.*: param name reserved/);
});

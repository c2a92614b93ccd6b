// Forms and run-time rules of Dagu 1.30.2 that troupe follows (issue 16), each through the API on
// the real server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedServer } from './helpers.ts';

describe('Dagu 1.30.2 forms and rules', () => {
  const server = sharedServer();

  test('precondition (singular) is preconditions at DAG, step and handler level, in every value shape', async () => {
    await server.writeDag('single', [
      'env:',
      '  - MODE: dev',
      'precondition: "test 1 -eq 1"',
      'handlerOn:',
      '  exit:',
      '    command: echo exit-ran',
      '    precondition:',
      '      - condition: "$MODE"',
      '        expected: prod',
      'steps:',
      '  - name: kept',
      '    command: echo kept',
      '    precondition:',
      '      condition: "$MODE"',
      '      expected: dev',
      '  - name: dropped',
      '    command: echo dropped',
      '    precondition: "test $MODE = prod"',
      '    depends: []',
    ].join('\n') + '\n');
    const run = await server.startAndWait('single');
    assert.deepEqual(run.nodes.map((node: any) => [node.step.name, node.statusLabel]), [['kept', 'succeeded'], ['dropped', 'skipped']]);
    assert.equal(run.onExit.statusLabel, 'skipped');
    await server.writeDag('closed', 'precondition: "test 1 -eq 2"\nsteps:\n  - echo never\n');
    const closed = await server.startAndWait('closed');
    assert.deepEqual([closed.statusLabel, closed.nodes[0].statusLabel], ['aborted', 'not_started']);
    const both = await server.call('POST', '/dags/validate', { spec: 'precondition: "true"\npreconditions: "true"\nsteps:\n  - echo x\n' });
    assert.equal(both.body.valid, false);
    assert.match(both.body.errors.join('\n'), /use preconditions or precondition/);
  });

  test('root params may be a map NAME: default, in map order, values as text, in main and local DAGs', async () => {
    await server.writeDag('mapped', [
      'params:',
      '  NAME: world',
      '  YEAR: 2024',
      '  EMPTY:',
      'steps:',
      '  - name: show',
      '    command: echo "$NAME $YEAR [$EMPTY] $1"',
      '  - name: child',
      '    call: inner',
      '    params: "WHO=local"',
      '---',
      'name: inner',
      'params:',
      '  WHO: nobody',
      '  N: 7',
      'steps:',
      '  - name: greet',
      '    command: echo "$WHO $N"',
      '    output: GREETING',
    ].join('\n') + '\n');
    const details = await server.call('GET', '/dags/mapped');
    assert.deepEqual(details.body.dag.params, ['NAME=world', 'YEAR=2024', 'EMPTY=']);
    const run = await server.startAndWait('mapped', { params: '{"NAME":"api"}' });
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
    assert.equal((await server.stepLog('mapped', run.dagRunId, 'show')).trim(), 'api 2024 []');
    const [sub] = (await server.call('GET', `/dag-runs/mapped/${run.dagRunId}/sub-dag-runs`)).body.subRuns;
    const outputs = (await server.call('GET', `/dag-runs/mapped/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}`)).body.dagRunDetails;
    assert.equal(outputs.statusLabel, 'succeeded');
    assert.equal(JSON.parse(outputs.params).N, '7');
    const nested = await server.call('POST', '/dags/validate', { spec: 'params:\n  A:\n    deep: 1\nsteps:\n  - echo x\n' });
    assert.equal(nested.body.valid, false);
    assert.match(nested.body.errors.join('\n'), /params\.A.*must be a text, a number or a boolean/);
  });

  test('the step log endpoints find handler nodes by their node names, in runs and sub DAG runs', async () => {
    await server.writeDag('handled', [
      'handlerOn:',
      '  init:',
      '    command: echo init-log',
      '  success:',
      '    command: echo success-log',
      '  exit:',
      '    command: echo exit-log',
      'steps:',
      '  - name: main',
      '    command: echo main-log',
    ].join('\n') + '\n');
    await server.writeDag('caller', 'steps:\n  - name: call\n    call: handled\n');
    const run = await server.startAndWait('handled');
    for (const [node, text] of [['onInit', 'init-log'], ['onSuccess', 'success-log'], ['onExit', 'exit-log'], ['main', 'main-log']]) {
      assert.equal((await server.stepLog('handled', run.dagRunId, node)).trim(), text, node);
    }
    const missing = await server.call('GET', `/dag-runs/handled/${run.dagRunId}/steps/onFailure/log`);
    assert.deepEqual([missing.status, missing.body.code], [404, 'not_found']);
    const proto = await server.call('GET', `/dag-runs/handled/${run.dagRunId}/steps/constructor/log`);
    assert.equal(proto.status, 404);
    const parent = await server.startAndWait('caller');
    const [sub] = (await server.call('GET', `/dag-runs/caller/${parent.dagRunId}/sub-dag-runs`)).body.subRuns;
    const subLog = await server.call('GET', `/dag-runs/caller/${parent.dagRunId}/sub-dag-runs/${sub.dagRunId}/steps/onExit/log`);
    assert.equal(subLog.body.content.trim(), 'exit-log');
  });

  test('a script\'s shebang chooses the interpreter unless the step sets shell; a DAG-level shell does not override it', async () => {
    const probe = '#!/bin/sh\necho "interpreter: $(readlink /proc/$$/exe)"\n';
    await server.writeDag('shebang', [
      'shell: bash',
      'steps:',
      '  - name: by-shebang',
      `    script: ${JSON.stringify(probe)}`,
      '  - name: multi-line',
      '    command: |',
      '      #!/bin/sh',
      '      echo "interpreter: $(readlink /proc/$$/exe)"',
      '  - name: own-shell',
      '    shell: bash',
      `    script: ${JSON.stringify(probe)}`,
      '  - name: plain',
      `    command: ${JSON.stringify('echo "interpreter: $(readlink /proc/$$/exe)"')}`,
    ].join('\n') + '\n');
    const run = await server.startAndWait('shebang');
    assert.equal(run.statusLabel, 'succeeded');
    const interpreter = async (step: string) => /interpreter: (\S+)/.exec(await server.stepLog('shebang', run.dagRunId, step))?.[1] ?? '';
    const sh = await interpreter('by-shebang');
    assert.doesNotMatch(sh, /bash$/, 'the shebang, not the DAG\'s bash');
    assert.equal(await interpreter('multi-line'), sh);
    assert.match(await interpreter('own-shell'), /bash$/);
    assert.match(await interpreter('plain'), /bash$/);
  });

  test('partial success: every failure allowed by continueOn and one node succeeded, also when the last step of a chain fails', async () => {
    await server.writeDag('lastfails', 'steps:\n  - name: first\n    command: echo ok\n  - name: last\n    command: exit 1\n    continueOn: failed\n');
    const run = await server.startAndWait('lastfails');
    assert.deepEqual([run.status, run.statusLabel, run.nodes.map((node: any) => node.statusLabel)], [6, 'partially_succeeded', ['succeeded', 'failed']]);
    await server.writeDag('nonesucceed', 'type: graph\nsteps:\n  - name: a\n    command: exit 1\n    continueOn: failed\n  - name: b\n    command: exit 2\n    continueOn: failed\n');
    assert.equal((await server.startAndWait('nonesucceed')).statusLabel, 'failed');
  });

  test('a handler whose preconditions do not hold is skipped and changes nothing: a skipped init lets the steps run', async () => {
    await server.writeDag('skipinit', [
      'handlerOn:',
      '  init:',
      '    command: exit 1',
      '    preconditions: "test 1 -eq 2"',
      '  success:',
      '    command: exit 1',
      '    preconditions: "test 1 -eq 2"',
      '  exit:',
      '    command: echo exit-ran',
      'steps:',
      '  - name: main',
      '    command: echo main',
    ].join('\n') + '\n');
    const run = await server.startAndWait('skipinit');
    assert.deepEqual(
      [run.statusLabel, run.onInit.statusLabel, run.nodes[0].statusLabel, run.onSuccess.statusLabel, run.onExit.statusLabel],
      ['succeeded', 'skipped', 'succeeded', 'skipped', 'succeeded'],
    );
  });

  test('after a failed init handler or an unmet DAG-level precondition, the abort handler runs, then exit', async () => {
    const handlers = '  abort:\n    command: echo abort-ran\n  exit:\n    command: echo exit-ran\n';
    await server.writeDag('initfails', `handlerOn:\n  init:\n    command: exit 3\n${handlers}steps:\n  - echo never\n`);
    await server.writeDag('dagcondfails', `preconditions: "test 1 -eq 2"\nhandlerOn:\n${handlers}steps:\n  - echo never\n`);
    for (const name of ['initfails', 'dagcondfails']) {
      const run = await server.startAndWait(name);
      assert.deepEqual([run.statusLabel, run.nodes[0].statusLabel, run.onCancel?.statusLabel, run.onExit?.statusLabel], ['aborted', 'not_started', 'succeeded', 'succeeded'], name);
      assert.ok(Date.parse(run.onCancel.finishedAt) <= Date.parse(run.onExit.startedAt), `${name}: abort before exit`);
      assert.equal((await server.stepLog(name, run.dagRunId, 'onCancel')).trim(), 'abort-ran');
    }
  });
});


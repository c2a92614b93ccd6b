// Forms and run-time rules of Dagu 1.30.2 that troupe follows, each through the API on
// the real server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  test('a shebang with a bare interpreter (#!env sh, #!sh -e) finds it on PATH, as Dagu does; a missing one fails naming it', async () => {
    await server.writeDag('bare-shebang', [
      'type: graph',
      'steps:',
      '  - name: by-env',
      `    script: ${JSON.stringify('#!env sh\necho "via env: $0"\n')}`,
      '  - name: with-flag',
      `    script: ${JSON.stringify('#!sh -e\nfalse\necho not reached\n')}`,
      '    continueOn:',
      '      failure: true',
      '  - name: missing',
      `    script: ${JSON.stringify('#!no-such-interpreter-x\necho never\n')}`,
      '    continueOn:',
      '      failure: true',
    ].join('\n') + '\n');
    const run = await server.startAndWait('bare-shebang');
    const nodes = new Map(run.nodes.map((node: { step: { name: string } }) => [node.step.name, node]));
    const byEnv = nodes.get('by-env') as { statusLabel: string; error: string };
    assert.equal(byEnv.statusLabel, 'succeeded', byEnv.error);
    assert.match(await server.stepLog('bare-shebang', run.dagRunId, 'by-env'), /^via env: \/.*\.script$/);
    // -e reached sh: the script stopped at false.
    assert.equal((nodes.get('with-flag') as { statusLabel: string }).statusLabel, 'failed');
    assert.equal(await server.stepLog('bare-shebang', run.dagRunId, 'with-flag'), '');
    const missing = nodes.get('missing') as { statusLabel: string; error: string };
    assert.equal(missing.statusLabel, 'failed');
    assert.match(missing.error, /no-such-interpreter-x/);
  });

  test('a step\'s dir expands ${VAR}, $VAR and ~ as the step starts, and is made when missing; one that cannot be made fails naming it', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'troupe-dirs-'));
    try {
      await writeFile(join(scratch, 'a-file'), '');
      await server.writeDag('expanded-dirs', [
        'type: graph',
        'env:', `  - BASE: ${scratch}/made`, `  - HOME: ${scratch}/home`, '  - REL: relative',
        'steps:',
        '  - name: braced', '    dir: ${BASE}/one', '    command: pwd',
        '  - name: bare', '    dir: $BASE/two', '    command: pwd',
        '  - name: home', '    dir: ~/three', '    command: pwd',
        '  - name: relative', '    dir: ${REL}/four', '    command: pwd',
        '  - name: own-env', '    env:', '      - SUB: five', '    dir: ${BASE}/${SUB}', '    command: pwd',
        '  - name: blocked', '    dir: ${BASE}/../a-file/six', '    command: pwd', '    continueOn:', '      failure: true',
      ].join('\n') + '\n');
      const run = await server.startAndWait('expanded-dirs');
      const log = (step: string) => server.stepLog('expanded-dirs', run.dagRunId, step);
      assert.equal(await log('braced'), `${scratch}/made/one`);
      assert.equal(await log('bare'), `${scratch}/made/two`);
      assert.equal(await log('home'), `${scratch}/home/three`);
      assert.equal(await log('relative'), join(server.home, 'dags', 'relative', 'four'));
      assert.equal(await log('own-env'), `${scratch}/made/five`);
      const blocked = run.nodes.find((node: { step: { name: string } }) => node.step.name === 'blocked');
      assert.equal(blocked.statusLabel, 'failed');
      assert.match(blocked.error, new RegExp(`working directory ${scratch}/a-file/six`));
      // The definition shows each dir as written.
      const details = await server.call('GET', '/dags/expanded-dirs');
      assert.equal(details.body.dag.steps[0].dir, '${BASE}/one');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
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
    // Run details leave the init handler's node out, as Dagu's do: the run log tells its end.
    const log = (await server.call('GET', `/dag-runs/skipinit/${run.dagRunId}/log`)).body.content as string;
    const init = /msg="Handler finished" .*handler=onInit status=(\S+)/.exec(log)?.[1];
    assert.deepEqual(
      [run.statusLabel, init, run.nodes[0].statusLabel, run.onSuccess.statusLabel, run.onExit.statusLabel],
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

  test('doneCount counts executions that reached an end: not a skip, not one cut off by a stop or the DAG timeout', async () => {
    await server.writeDag('counts', [
      'type: graph',
      'steps:',
      '  - name: ran',
      '    command: echo ran',
      '  - name: skipped',
      '    command: echo never',
      '    preconditions: "test 1 -eq 2"',
      '  - name: own-timeout',
      '    command: sleep 5',
      '    timeoutSec: 1',
      '  - name: failed',
      '    command: exit 2',
    ].join('\n') + '\n');
    const run = await server.startAndWait('counts');
    assert.deepEqual(run.nodes.map((node: any) => [node.step.name, node.statusLabel, node.doneCount]),
      [['ran', 'succeeded', 1], ['skipped', 'skipped', 0], ['own-timeout', 'failed', 1], ['failed', 'failed', 1]]);
    await server.writeDag('dagtimeout', 'timeoutSec: 1\nsteps:\n  - name: long\n    command: sleep 5\n');
    const timedOut = await server.startAndWait('dagtimeout');
    assert.deepEqual([timedOut.statusLabel, timedOut.nodes[0].statusLabel, timedOut.nodes[0].doneCount], ['failed', 'aborted', 0]);
    await server.writeDag('stopped', 'steps:\n  - name: long\n    command: sleep 30\n');
    const started = await server.call('POST', '/dags/stopped/start', {});
    await server.waitForRun('stopped', started.body.dagRunId, (candidate) => candidate.nodes[0].status === 1);
    await server.call('POST', `/dag-runs/stopped/${started.body.dagRunId}/stop`);
    const stopped = await server.waitForRun('stopped', started.body.dagRunId);
    assert.deepEqual([stopped.statusLabel, stopped.nodes[0].doneCount], ['aborted', 0]);
  });

  test('a step that ran and failed still stores its output, for handlers and continueOn dependants', async () => {
    await server.writeDag('failedout', [
      'handlerOn:',
      '  failure:',
      '    command: echo "handler sees $LAST"',
      'steps:',
      '  - name: soft',
      '    command: echo soft-value; exit 1',
      '    output: SOFT',
      '    continueOn: failed',
      '  - name: reads',
      '    command: echo "next sees $SOFT"',
      '  - name: hard',
      '    command: echo last-value; exit 3',
      '    output: LAST',
    ].join('\n') + '\n');
    const run = await server.startAndWait('failedout');
    assert.equal(run.statusLabel, 'failed');
    assert.equal((await server.stepLog('failedout', run.dagRunId, 'reads')).trim(), 'next sees soft-value');
    assert.equal((await server.stepLog('failedout', run.dagRunId, 'onFailure')).trim(), 'handler sees last-value');
    const outputs = (await server.call('GET', `/dag-runs/failedout/${run.dagRunId}/outputs`)).body.outputs;
    assert.deepEqual(outputs, { soft: 'soft-value', last: 'last-value' });
    await server.writeDag('skippedout', 'steps:\n  - name: never\n    command: echo x\n    output: NEVER\n    preconditions: "test 1 -eq 2"\n');
    const skipped = await server.startAndWait('skippedout');
    assert.deepEqual((await server.call('GET', `/dag-runs/skippedout/${skipped.dagRunId}/outputs`)).body.outputs, {});
  });

  test('a command may be a list of command lines: each its own shell command, in order, stopping at the first that fails', async () => {
    await server.writeDag('lines', [
      'type: graph',
      'steps:',
      '  - name: all',
      '    command:',
      '      - echo one',
      '      - X=kept; echo "set $X"',
      '      - echo "X is [$X]"',
      '    output: ALL',
      '  - name: stops',
      '    command:',
      '      - echo first',
      '      - sh -c "exit 7"',
      '      - echo never',
      '    output: PART',
      '    continueOn: failed',
    ].join('\n') + '\n');
    const details = (await server.call('GET', '/dags/lines')).body.dag.steps[0];
    assert.deepEqual(details.commands.map((command: any) => command.command), ['echo', 'X=kept;', 'echo']);
    const run = await server.startAndWait('lines');
    const [all, stops] = run.nodes;
    assert.equal(all.statusLabel, 'succeeded');
    assert.equal((await server.stepLog('lines', run.dagRunId, 'all')).trim(), 'one\nset kept\nX is []', 'no shell state carries over');
    assert.deepEqual([stops.statusLabel, stops.error], ['failed', 'failed to execute step "stops": command 2 of 3 failed (sh -c "exit 7"): exit status 7']);
    assert.equal((await server.stepLog('lines', run.dagRunId, 'stops')).trim(), 'first');
    const outputs = (await server.call('GET', `/dag-runs/lines/${run.dagRunId}/outputs`)).body.outputs;
    assert.deepEqual(outputs, { all: 'one\nset kept\nX is []', part: 'first' });
    const bad = await server.call('POST', '/dags/validate', { spec: 'steps:\n  - name: a\n    command: []\n  - name: b\n    executor: jq\n    command: [".a", ".b"]\n' });
    assert.equal(bad.body.valid, false);
    assert.match(bad.body.errors.join('\n'), /must not be empty/);
    assert.match(bad.body.errors.join('\n'), /runs with the shell executor, not jq/);
  });

  test('generated step names, as the API shows them: executor, fan-out, call, script, command', async () => {
    const spec = [
      'steps:',
      '  - executor: jq',
      '    command: .a',
      `    script: '{"a": 1}'`,
      '  - call: inner',
      '    parallel: [a, b]',
      '  - call: inner',
      '  - script: echo s',
      '  - command: |',
      '      echo one',
      '      echo two',
      '  - echo plain',
      '---',
      'name: inner',
      'steps:',
      '  - echo inner',
    ].join('\n') + '\n';
    assert.equal((await server.call('POST', '/dags', { name: 'named', spec })).status, 201);
    const steps = (await server.call('GET', '/dags/named')).body.dag.steps.map((step: any) => step.name);
    assert.deepEqual(steps, ['jq_1', 'parallel_2', 'dag_3', 'script_4', 'script_5', 'cmd_6']);
    const run = await server.startAndWait('named');
    assert.deepEqual(run.nodes.map((node: any) => [node.step.name, node.statusLabel]),
      [['jq_1', 'succeeded'], ['parallel_2', 'succeeded'], ['dag_3', 'succeeded'], ['script_4', 'succeeded'], ['script_5', 'succeeded'], ['cmd_6', 'succeeded']]);
  });

  test('the forms and rules hold in a local DAG run as a sub DAG run, and in its handlers', async () => {
    await server.writeDag('outer', [
      'steps:',
      '  - name: call',
      '    call: inner',
      '    params: "WHO=outer"',
      '---',
      'name: inner',
      'params:',
      '  WHO: nobody',
      'precondition: "test -n $WHO"',
      'handlerOn:',
      '  init:',
      '    command: exit 1',
      '    precondition: "test 1 -eq 2"',
      '  success:',
      '    command: echo "success sees $SOFT"',
      'steps:',
      '  - name: lines',
      '    command:',
      '      - echo "hello $WHO"',
      '      - echo second',
      '  - name: soft',
      `    script: ${JSON.stringify('#!/bin/sh\necho soft-out; exit 1\n')}`,
      '    output: SOFT',
      '    continueOn: failed',
      '    precondition:',
      '      condition: "$WHO"',
      '      expected: outer',
    ].join('\n') + '\n');
    const run = await server.startAndWait('outer');
    const [sub] = (await server.call('GET', `/dag-runs/outer/${run.dagRunId}/sub-dag-runs`)).body.subRuns;
    const child = (await server.call('GET', `/dag-runs/outer/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}`)).body.dagRunDetails;
    const childLog = (await server.call('GET', `/dag-runs/outer/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}/log`)).body.content as string;
    const init = /msg="Handler finished" .*handler=onInit status=(\S+)/.exec(childLog)?.[1];
    assert.deepEqual(
      [child.statusLabel, init, child.nodes.map((node: any) => [node.statusLabel, node.doneCount]), child.onSuccess.statusLabel],
      ['partially_succeeded', 'skipped', [['succeeded', 1], ['failed', 1]], 'succeeded'],
    );
    assert.deepEqual([run.statusLabel, run.nodes[0].statusLabel], ['partially_succeeded', 'partially_succeeded']);
    const log = (step: string) => server.call('GET', `/dag-runs/outer/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}/steps/${step}/log`).then((answer) => answer.body.content.trim());
    assert.equal(await log('lines'), 'hello outer\nsecond');
    assert.equal(await log('onSuccess'), 'success sees soft-out');
  });
});


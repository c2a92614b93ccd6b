// How variables reach params, preconditions and shell code as in Dagu 1.30.2, each through the API
// on the real server, in steps, handlers, local DAGs and sub DAG runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedServer, type TestServer } from './helpers.ts';

const SECRET_ENV = 'VARS_RULES_TEST_SECRET';

/** The stdout of a sub DAG run's step (the first sub run of `step`'s run). */
async function subStepLog(server: TestServer, name: string, dagRunId: string, step: string): Promise<string> {
  const [sub] = (await server.call('GET', `/dag-runs/${name}/${dagRunId}/sub-dag-runs`)).body.subRuns;
  return (await server.call('GET', `/dag-runs/${name}/${dagRunId}/sub-dag-runs/${sub.dagRunId}/steps/${step}/log`)).body.content;
}

describe('variables as Dagu evaluates them', () => {
  const server = sharedServer();
  before(() => {
    process.env[SECRET_ENV] = 'vars-secret-value';
  });
  after(() => {
    delete process.env[SECRET_ENV];
  });

  test('param defaults are evaluated like env values, after the env, with dotenv, built-ins and earlier params in scope', async () => {
    await writeFile(join(server.home, 'dags', 'vars.env'), 'FROM_DOTENV=dot\n');
    await server.writeDag('defaults', [
      'dotenv: vars.env',
      'env:',
      '  - BASE: /data',
      '  - WHO: "`printf anon`"',
      '  - SAME: fromenv',
      '  - SEES_PARAM: ${FIRST}',
      'params:',
      '  - FIRST: ${BASE}/in',
      '  - SECOND: ${FIRST}/x',
      '  - SLICE: ${BASE:1:2}',
      '  - TICK: "`echo tick-$BASE`"',
      '  - FALLBACK: ${NOPE:-fallback}',
      '  - NAME: ${DAG_NAME}',
      '  - MIXED: ${WHO}-${FROM_DOTENV}',
      '  - SAME: fromparam',
      'handlerOn:',
      '  exit:',
      '    command: echo "exit $SECOND"',
      'steps:',
      '  - name: show',
      '    command: echo "$FIRST $SECOND $SLICE $TICK $FALLBACK $NAME $MIXED $SAME"',
      '  - name: env-first',
      '    command: printenv SEES_PARAM',
      '  - name: child',
      '    call: inner',
      '---',
      'name: inner',
      'env:',
      '  - ROOT: /inner',
      'params:',
      '  - DIR: ${ROOT}/dir',
      '  - FILE: ${DIR}/f',
      'steps:',
      '  - name: show',
      '    command: echo "$DIR $FILE"',
    ].join('\n') + '\n');
    const run = await server.startAndWait('defaults');
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
    // The DAG's env is evaluated first: it does not see the params, and a param of the same name wins.
    assert.equal(await server.stepLog('defaults', run.dagRunId, 'show'), '/data/in /data/in/x da tick-/data fallback defaults anon-dot fromparam');
    assert.equal(await server.stepLog('defaults', run.dagRunId, 'env-first'), '${FIRST}');
    assert.equal(await server.stepLog('defaults', run.dagRunId, 'onExit'), 'exit /data/in/x');
    assert.equal(await subStepLog(server, 'defaults', run.dagRunId, 'show'), '/inner/dir /inner/dir/f');
    assert.equal(JSON.parse(run.params).SECOND, '/data/in/x');
    // Defaults see the earlier defaults, not the request's values (as Dagu), which are never evaluated.
    const given = await server.startAndWait('defaults', { params: 'FIRST=given SLICE="${BASE}"' });
    const params = JSON.parse(given.params);
    assert.deepEqual([params.FIRST, params.SECOND, params.SLICE], ['given', '/data/in/x', '${BASE}']);
  });

  test('preconditions at DAG, step and handler level see params (positional too), env and earlier outputs', async () => {
    await server.writeDag('guarded', [
      'params: "alpha beta MODE=dev"',
      'env:',
      '  - STAGE: prod',
      'preconditions:',
      '  - condition: "$1"',
      '    expected: alpha',
      '  - test "$2" = beta',
      'handlerOn:',
      '  success:',
      '    command: echo success-ran',
      '    preconditions:',
      '      - condition: "$1-${STAGE}-$OUT"',
      '        expected: alpha-prod-made',
      '  exit:',
      '    command: echo exit-ran',
      '    preconditions: test "${2}" = beta',
      'steps:',
      '  - name: make',
      '    command: echo made',
      '    output: OUT',
      '  - name: kept',
      '    depends: [make]',
      '    preconditions:',
      '      - condition: "${1}:$OUT:$STAGE:$MODE"',
      '        expected: alpha:made:prod:dev',
      '      - test "$2" = beta',
      '    command: echo kept-ran',
      '  - name: dropped',
      '    depends: [make]',
      '    preconditions:',
      '      - condition: "$2"',
      '        expected: alpha',
      '    command: echo dropped-ran',
      '  - name: child',
      '    depends: [make]',
      '    call: inner',
      '    params: "x y"',
      '---',
      'name: inner',
      'params: "p q"',
      'preconditions: test "$1 $2" = "x y"',
      'steps:',
      '  - name: first',
      '    preconditions:',
      '      - condition: "$2"',
      '        expected: y',
      '    command: echo "inner $1"',
    ].join('\n') + '\n');
    const run = await server.startAndWait('guarded');
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
    assert.deepEqual(run.nodes.map((node: any) => [node.step.name, node.statusLabel]),
      [['make', 'succeeded'], ['kept', 'succeeded'], ['dropped', 'skipped'], ['child', 'succeeded']]);
    assert.deepEqual([run.onSuccess.statusLabel, run.onExit.statusLabel], ['succeeded', 'succeeded']);
    assert.equal(await subStepLog(server, 'guarded', run.dagRunId, 'first'), 'inner x');
    // A request's positional params are what the DAG-level precondition sees.
    const refused = await server.startAndWait('guarded', { params: '["beta", "beta"]' });
    assert.deepEqual([refused.statusLabel, refused.nodes[0].statusLabel], ['aborted', 'not_started']);
  });

  for (const secret of [false, true]) {
    test(`single quotes next to a reference leave it as written (not a JSON path); a braced one between double quotes keeps its value's quotes${secret ? ' (a DAG with a secret)' : ''}`, async () => {
      const name = secret ? 'quoted-secret' : 'quoted';
      await server.writeDag(name, [
        ...(secret ? ['secrets:', '  - name: TOKEN', '    provider: env', `    key: ${SECRET_ENV}`] : []),
        'params:',
        '  - J: \'{"a": "x y", "b": [1, 2]}\'',
        'handlerOn:',
        '  exit:',
        '    command: printf "%s|" "${J}" \'${J}\'',
        'steps:',
        '  - name: make',
        '    script: |',
        '      printf \'%s\' \'{"k": {"q": "v\\"w"}}\'',
        '    output: OBJ',
        '  - name: money',
        '    script: |',
        '      printf \'%s\' \'cost $5, `date` and \\n\'',
        '    output: W',
        '  - name: quoted',
        '    depends: [make, money]',
        '    preconditions:',
        '      - command: |-',
        '          test "${J}" = \'{"a": "x y", "b": [1, 2]}\'',
        '    command: |',
        '      printf "%s|" "${J}" \'${J}\' \'$1\' "${OBJ.k}" "${OBJ.k.q}" \'${OBJ.k.q}\' "${W}" "$J" "pre ${J}"',
        '  - name: child',
        '    depends: [make]',
        '    call: inner',
        '    params:',
        '      DOC: ${J}',
        '---',
        'name: inner',
        'params:',
        '  - DOC: ""',
        'steps:',
        '  - name: show',
        '    command: printf "%s|" "${DOC}" \'${DOC}\' "${DOC.a}"',
      ].join('\n') + '\n');
      const run = await server.startAndWait(name);
      assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
      assert.equal(await server.stepLog(name, run.dagRunId, 'quoted'), [
        '{"a": "x y", "b": [1, 2]}', '${J}', '$1', '{"q":"v\\"w"}', 'v"w', 'v"w', 'cost $5, `date` and \\n',
        // Not directly between double quotes: Dagu inserts the value for the shell to read as code
        // ('{a: x', 'y, b: [1, 2]}'); troupe leaves the reference to the shell, so the value stays a value.
        '{"a": "x y", "b": [1, 2]}', 'pre {"a": "x y", "b": [1, 2]}', '',
      ].join('|'));
      assert.equal(await server.stepLog(name, run.dagRunId, 'onExit'), '{"a": "x y", "b": [1, 2]}|${J}|');
      assert.equal(await subStepLog(server, name, run.dagRunId, 'show'), '{"a": "x y", "b": [1, 2]}|${DOC}|x y|');
    });
  }

  test('${VAR.path} of a JSON value with nothing at the path is <nil>; an unset or non-JSON VAR stays as written', async () => {
    await server.writeDag('paths', [
      'params:',
      '  - PLAIN: not json',
      '  - DOC: \'{"k": {"q": 1}, "list": [1, 2], "none": null}\'',
      'handlerOn:',
      '  exit:',
      '    command: echo " ${DOC.k.gone}"',
      'steps:',
      '  - name: paths',
      '    preconditions:',
      '      - condition: "${DOC.missing}"',
      '        expected: <nil>',
      '    command: printf "%s|" "${DOC.missing}" "${DOC.k.q.deeper}" "${DOC.list.7}" "${DOC.none}" ${DOC.k.q} \' ${PLAIN.x}\' \' ${UNSET.x}\'',
      '  - name: child',
      '    call: inner',
      '    params: "DOC=\'{\\"a\\": 1}\'"',
      '---',
      'name: inner',
      'params:',
      '  - DOC: "{}"',
      'steps:',
      '  - name: show',
      '    command: printf "%s|" "${DOC.a}" "${DOC.b}"',
    ].join('\n') + '\n');
    const run = await server.startAndWait('paths');
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
    assert.equal(await server.stepLog('paths', run.dagRunId, 'paths'), '<nil>|<nil>|<nil>|<nil>|1| ${PLAIN.x}| ${UNSET.x}|');
    assert.equal(await server.stepLog('paths', run.dagRunId, 'onExit'), ' <nil>');
    assert.equal(await subStepLog(server, 'paths', run.dagRunId, 'show'), '1|<nil>|');
  });
});

// `executor: jq` runs real jq (jq-wasm) on the worker pool. `command` is the
// filter, `script` the input JSON (variables expanded); one result per line, as indented JSON with
// sorted keys, or raw with `config.raw`; output captured, logs, masking, timeoutSec, continueOn and
// retryPolicy as for shell steps; an invalid filter or input fails the step with jq's message.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, stepError } from './helpers.ts';

const SECRET = 'jq-S3CRET-7d41e09b';
const SECRET_ENV = 'JQ_RULES_TEST_TOKEN';

describe('rule 21: the jq executor', () => {
  let server: TestServer;
  before(async () => {
    process.env[SECRET_ENV] = SECRET;
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
    delete process.env[SECRET_ENV];
  });

  const run = async (name: string, spec: string, body: object = {}) => {
    const created = await server.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
    return server.startAndWait(name, body);
  };
  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;

  test('results print one per line as JSON: strings quoted, objects and arrays indented 4 spaces with sorted keys; the output is captured', async () => {
    const spec = [
      'steps:',
      '  - name: pick',
      '    executor: jq',
      '    command: .b, .a[], .s, .n',
      `    script: '{"s": "x y", "b": {"z": 1, "y": [true, null]}, "a": [1, "two"], "n": 3.5}'`,
      '    output: PICKED',
    ].join('\n');
    const dagRun = await run('jq_json', spec);
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));
    const expected = '{\n    "y": [\n        true,\n        null\n    ],\n    "z": 1\n}\n1\n"two"\n"x y"\n3.5';
    assert.equal(await server.stepLog('jq_json', dagRun.dagRunId, 'pick'), expected);
    assert.equal((await server.call('GET', `/dag-runs/jq_json/${dagRun.dagRunId}/outputs`)).body.outputs.picked, expected);
    assert.equal(node(dagRun, 'pick').step.executorConfig.type, 'jq');
  });

  test('config.raw prints strings unquoted and other values as compact JSON with sorted keys', async () => {
    const spec = [
      'steps:',
      '  - name: raw',
      '    executor:',
      '      type: jq',
      '      config:',
      '        raw: true',
      '    command: .[]',
      `    script: '["  padded", {"b": 2, "a": [1, 2]}, 7, true, null]'`,
      '    output: RAW',
    ].join('\n');
    const dagRun = await run('jq_raw', spec);
    assert.equal(dagRun.status, 4);
    assert.equal(await server.stepLog('jq_raw', dagRun.dagRunId, 'raw'), '  padded\n{"a":[1,2],"b":2}\n7\ntrue\nnull');
    // The captured output is trimmed, as a shell step's is.
    assert.equal((await server.call('GET', `/dag-runs/jq_raw/${dagRun.dagRunId}/outputs`)).body.outputs.raw, 'padded\n{"a":[1,2],"b":2}\n7\ntrue\nnull');
  });

  test('the filter and the input expand variables (params, outputs of earlier steps); a multi-line filter stays the filter; secrets are masked', async () => {
    const spec = [
      'params:',
      '  - LIMIT: 2',
      'secrets:',
      '  - name: TOKEN',
      '    provider: env',
      `    key: ${SECRET_ENV}`,
      'steps:',
      '  - name: items',
      '    command: echo \'[{"id":1},{"id":2},{"id":3}]\'',
      '    output: ITEMS',
      '  - name: filter',
      '    executor: jq',
      '    command: |',
      '      .items[]',
      '      | select(.id <= ${LIMIT})',
      '      | {id, token: $token}',
      '    script: |',
      '      {"items": ${ITEMS}}',
      '    output: FILTERED',
      '  - name: token',
      '    executor:',
      '      type: jq',
      '      config: {raw: true}',
      '    command: .token',
      `    script: '{"token": "\${TOKEN}"}'`,
      '    output: TOKEN_OUT',
    ].join('\n').replace('$token', '"${TOKEN}"');
    const created = await server.call('POST', '/dags', { name: 'jq_vars', spec });
    // Before expansion the script is not JSON: the definition must still be accepted.
    assert.equal(created.status, 201, created.text);
    const dagRun = await server.startAndWait('jq_vars');
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));
    const filtered = await server.stepLog('jq_vars', dagRun.dagRunId, 'filter');
    assert.equal(filtered, '{\n    "id": 1,\n    "token": "*******"\n}\n{\n    "id": 2,\n    "token": "*******"\n}');
    assert.equal(await server.stepLog('jq_vars', dagRun.dagRunId, 'token'), '*******');
    const outputs = await server.call('GET', `/dag-runs/jq_vars/${dagRun.dagRunId}/outputs`);
    assert.ok(!outputs.text.includes(SECRET), outputs.text);
    assert.ok(outputs.text.includes('*******'), outputs.text);
  });

  test('an invalid filter, invalid input JSON or an error after some results fails the step with jq\'s message', async () => {
    const spec = [
      'type: graph',
      'steps:',
      '  - name: bad_filter',
      '    executor: jq',
      '    command: .a |',
      `    script: '{"a": 1}'`,
      '  - name: bad_input',
      '    executor: jq',
      '    command: .',
      `    script: '{"a": '`,
      '  - name: late_error',
      '    executor: jq',
      '    command: .[] | if . == 2 then error("two is not allowed") else . end',
      `    script: '[1, 2, 3]'`,
    ].join('\n');
    const dagRun = await run('jq_errors', spec);
    assert.equal(dagRun.status, 2);
    const badFilter = node(dagRun, 'bad_filter');
    assert.equal(badFilter.status, 2);
    assert.match(badFilter.error, /^failed to execute step "bad_filter": jq: error: syntax error, unexpected end of file/);
    assert.match(badFilter.error, /jq: 1 compile error$/);
    assert.match(await stderrLog('jq_errors', dagRun.dagRunId, 'bad_filter'), /jq: 1 compile error$/);
    const badInput = node(dagRun, 'bad_input');
    assert.equal(badInput.status, 2);
    assert.equal(badInput.error, stepError('bad_input', 'jq: parse error: Unfinished JSON term at EOF at line 1, column 6'));
    const late = node(dagRun, 'late_error');
    assert.equal(late.status, 2);
    assert.equal(late.error, stepError('late_error', 'jq: error (at /dev/stdin:0): two is not allowed'));
    assert.equal(await server.stepLog('jq_errors', dagRun.dagRunId, 'late_error'), '');
  });

  test('a 1 MB input runs through jq steps in well under the test\'s time (jq-wasm\'s raw() took over 25 s, moving it a byte at a time)', async () => {
    const items: string[] = [];
    for (let length = 12; length < 1_000_000; length += items.at(-1)!.length + 1) items.push(JSON.stringify({ name: `item-${items.length}`, size: items.length, tags: ['a', 'b'] }));
    const input = `{"items":[${items.join(',')}]}`;
    const jq = (name: string, command: string, raw: boolean, script: string) => [
      `  - name: ${name}`, '    executor:', '      type: jq', '      config:', `        raw: ${raw}`, `    command: '${command}'`, '    script: |', `      ${script}`,
    ];
    // Written to the DAG folder: the definition is larger than a request body may be. The input
    // reaches the later steps as the first one's output.
    await server.writeDag('jq_large', [
      'steps:', ...jq('same', '.', true, input), '    output: SAME',
      ...jq('count', '(.items | length), .items[-1]', false, '${SAME}'), ...jq('names', '.items[] | .name', true, '${SAME}'),
    ].join('\n'));
    // The run's record holds the 1 MB script: failures name the steps' states, never the record.
    const started = await server.call('POST', '/dags/jq_large/start', {});
    const dagRun = await server.waitForRun('jq_large', started.body.dagRunId).catch(async () => {
      const { body } = await server.call('GET', `/dag-runs/jq_large/${started.body.dagRunId}`);
      await server.call('POST', `/dag-runs/jq_large/${started.body.dagRunId}/stop`);
      throw new Error(`the run did not end in time: ${JSON.stringify(body.dagRun.nodes.map((n: any) => [n.step.name, n.statusLabel]))}`);
    });
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));
    // Compact with sorted keys, the input comes back as it was.
    const same = await server.stepLog('jq_large', dagRun.dagRunId, 'same');
    assert.ok(same === input, `the step printed ${same.length} bytes, not the ${input.length} of its input`);
    const last = items.length - 1;
    assert.equal(await server.stepLog('jq_large', dagRun.dagRunId, 'count'), `${items.length}\n{\n    "name": "item-${last}",\n    "size": ${last},\n    "tags": [\n        "a",\n        "b"\n    ]\n}`);
    const names = (await server.call('GET', `/dag-runs/jq_large/${dagRun.dagRunId}/steps/names/log?tail=2`)).body;
    assert.deepEqual([names.totalLines, names.content], [items.length, `item-${last - 1}\nitem-${last}`]);
  });

  test('continueOn and retryPolicy work for jq steps, and a jq handler runs', async () => {
    const spec = [
      'handlerOn:',
      '  exit:',
      '    executor: jq',
      '    command: .status',
      `    script: '{"status": "\${DAG_RUN_STATUS}"}'`,
      'steps:',
      '  - name: flaky',
      '    executor: jq',
      '    command: error("nope")',
      `    script: '{}'`,
      '    retryPolicy:',
      '      limit: 2',
      '      intervalSec: 0',
      '    continueOn:',
      '      failure: true',
      '  - name: after',
      '    command: echo ran',
    ].join('\n');
    const dagRun = await run('jq_policies', spec);
    assert.equal(dagRun.status, 6);
    const flaky = node(dagRun, 'flaky');
    assert.equal(flaky.status, 2);
    assert.equal(flaky.retryCount, 2);
    assert.equal(flaky.error, stepError('flaky', 'jq: error (at /dev/stdin:0): nope'));
    assert.equal(node(dagRun, 'after').status, 4);
    assert.equal(dagRun.onExit.status, 4);
    assert.equal(await server.stepLog('jq_policies', dagRun.dagRunId, 'onExit'), '"partially_succeeded"');
  });

  test('timeoutSec ends a jq filter that never finishes; the next jq step runs', async () => {
    const spec = [
      'steps:',
      '  - name: forever',
      '    executor: jq',
      '    command: until(false; .)',
      `    script: '1'`,
      '    timeoutSec: 1',
      '    continueOn:',
      '      failure: true',
      '  - name: next',
      '    executor: jq',
      '    command: . + 1',
      `    script: '41'`,
    ].join('\n');
    const dagRun = await run('jq_timeout', spec);
    const forever = node(dagRun, 'forever');
    assert.equal(forever.status, 2);
    assert.match(forever.error, /timed out/);
    assert.equal(node(dagRun, 'next').status, 4);
    assert.equal(await server.stepLog('jq_timeout', dagRun.dagRunId, 'next'), '42');
  });

  test('a stop ends a running jq filter: the run is aborted', async () => {
    const spec = ['steps:', '  - name: forever', '    executor: jq', '    command: until(false; .)', `    script: '1'`].join('\n');
    assert.equal((await server.call('POST', '/dags', { name: 'jq_stop', spec })).status, 201);
    const { body } = await server.call('POST', '/dags/jq_stop/start', {});
    await server.waitForRun('jq_stop', body.dagRunId, (dagRun) => dagRun.nodes[0].status === 1);
    assert.equal((await server.call('POST', `/dag-runs/jq_stop/${body.dagRunId}/stop`)).status, 200);
    const stopped = await server.waitForRun('jq_stop', body.dagRunId);
    assert.deepEqual([stopped.statusLabel, stopped.nodes[0].statusLabel], ['aborted', 'aborted']);
  });

  test('a jq step of a local DAG run as a sub DAG gets the call\'s params; its output reaches the parent', async () => {
    const spec = [
      'steps:',
      '  - name: call',
      '    call: double',
      '    params: "N=21"',
      '    output: RESULT',
      '---',
      'name: double',
      'params:',
      '  - N: 1',
      'steps:',
      '  - name: twice',
      '    executor: jq',
      '    command: .n * 2',
      `    script: '{"n": \${N}}'`,
      '    output: DOUBLED',
    ].join('\n');
    const dagRun = await run('jq_local', spec);
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));
    const result = JSON.parse((await server.call('GET', `/dag-runs/jq_local/${dagRun.dagRunId}/outputs`)).body.outputs.result);
    assert.deepEqual(result.outputs, { DOUBLED: '42' });
  });
});

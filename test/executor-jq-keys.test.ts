// A jq step as Dagu accepts it: without a command (no query) it is saved, reads its input, prints
// nothing and succeeds with gojq's complaint on stderr; `raw` is read as Dagu's decoder reads it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.ts';

describe('the jq executor: a step without a query, and raw as Dagu reads it', () => {
  let server: TestServer;
  before(async () => { server = await startTestServer(); });
  after(async () => { await server.close(); });

  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;

  test('no command: accepted; with one JSON document as input the step prints nothing and succeeds, saying why on stderr; bad input still fails', async () => {
    const spec = [
      'type: graph',
      'steps:',
      '  - name: bare',
      '    executor: jq',
      `    script: '{"a": 1}'`,
      '    output: NOTHING',
      '  - name: blank',
      '    executor: {type: jq, config: {raw: true}}',
      '    command: "  "',
      `    script: '[1, 2]'`,
      '  - name: broken',
      '    executor: jq',
      '    script: "{oops"',
    ].join('\n');
    const validated = await server.call('POST', '/dags', { name: 'jq_no_query', spec });
    assert.equal(validated.status, 201, validated.text);
    const dagRun = await server.startAndWait('jq_no_query');
    for (const name of ['bare', 'blank']) {
      assert.equal(node(dagRun, name).statusLabel, 'succeeded', node(dagRun, name).error);
      assert.equal(await server.stepLog('jq_no_query', dagRun.dagRunId, name), '');
      assert.equal(await stderrLog('jq_no_query', dagRun.dagRunId, name), 'failed to run jq query: missing query (try ".")');
    }
    const broken = node(dagRun, 'broken');
    assert.equal(broken.statusLabel, 'failed');
    assert.match(broken.error, /^failed to execute step "broken": jq: the input is not one JSON document: /);
  });

  test('raw: "true" and 1 are true as in Dagu; raw: maybe is refused when the definition is saved', async () => {
    const spec = [
      'steps:',
      '  - name: text',
      '    executor: {type: jq, config: {raw: "true"}}',
      '    command: .name',
      `    script: '{"name": "plain"}'`,
      '  - name: one',
      '    executor: {type: jq, config: {RAW: 1}}',
      '    command: .name',
      `    script: '{"name": "also plain"}'`,
    ].join('\n');
    const created = await server.call('POST', '/dags', { name: 'jq_weak_raw', spec });
    assert.equal(created.status, 201, created.text);
    const dagRun = await server.startAndWait('jq_weak_raw');
    assert.equal(await server.stepLog('jq_weak_raw', dagRun.dagRunId, 'text'), 'plain');
    assert.equal(await server.stepLog('jq_weak_raw', dagRun.dagRunId, 'one'), 'also plain');
    const refused = await server.call('POST', '/dags', { name: 'jq_bad_raw', spec: 'steps:\n  - executor: {type: jq, config: {raw: maybe}}\n    command: .\n    script: "{}"' });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.message, /raw.*must be true or false/);
  });
});

// The examples of docs/executors/shell.md, jq.md and dag.md run as their pages say (the other
// executors' pages are run by their own tests).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
before(async () => { server = await startTestServer(); });
after(() => server.close());

function example(page: string): string {
  const text = readFileSync(new URL(`../docs/executors/${page}`, import.meta.url), 'utf8');
  const yaml = /```yaml\n([\s\S]*?)```/.exec(text)?.[1];
  assert.ok(yaml, `${page} has an example`);
  return yaml;
}

async function runExample(page: string, name: string): Promise<any> {
  const created = await server.call('POST', '/dags', { name, spec: example(page) });
  assert.equal(created.status, 201, created.text);
  const run = await server.startAndWait(name);
  assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run.nodes.map((node: any) => [node.step.name, node.error])));
  return run;
}

const stderr = async (name: string, dagRunId: string, step: string) =>
  (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;

test('shell.md: the example runs; its logs read as the page says', async () => {
  const run = await runExample('shell.md', 'shell-example');
  assert.equal(await server.stepLog('shell-example', run.dagRunId, 'script'), 'line 1\nline 2\nline 3');
  assert.equal(await stderr('shell-example', run.dagRunId, 'script'), 'hello, world');
  assert.equal(await server.stepLog('shell-example', run.dagRunId, 'python'), 'from python');
});

test('jq.md: the example runs; its logs read as the page says', async () => {
  const run = await runExample('jq.md', 'jq-example');
  assert.equal(await server.stepLog('jq-example', run.dagRunId, 'total'), '8');
  assert.equal(await server.stepLog('jq-example', run.dagRunId, 'names'), 'a\nb');
});

test('dag.md: the example runs; its logs read as the page says', async () => {
  const run = await runExample('dag.md', 'dag-example');
  assert.equal(await server.stepLog('dag-example', run.dagRunId, 'show'), 'artifact-linux.tar');
});

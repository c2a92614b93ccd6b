// Conditions read the results of the steps before them, as commands do: a precondition or a
// repeatPolicy condition with ${id.exitCode}, ${id.stdout} (the step's output file) and a backtick
// command that reads it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
before(async () => { server = await startTestServer(); });
after(() => server.close());

const SPEC = `maxActiveSteps: 4
steps:
  - name: first
    id: first
    command: exit 3
    continueOn:
      failure: true
  - name: when-three
    depends: first
    preconditions:
      - condition: "\${first.exitCode}"
        expected: "3"
    command: echo ran-three
  - name: when-zero
    depends: first
    preconditions:
      - condition: "\${first.exitCode}"
        expected: "0"
    command: echo ran-zero
  - name: speaks
    id: out
    depends: []
    command: echo hello-out
  - name: file-has-text
    depends: speaks
    preconditions:
      - condition: "test -s \${out.stdout}"
    command: echo file-ok
  - name: file-says-hello
    depends: speaks
    preconditions:
      - condition: "\`cat \${out.stdout}\`"
        expected: hello-out
    command: echo said-hello
  - name: until-three
    depends: first
    repeatPolicy:
      repeat: until
      condition: "\${first.exitCode}"
      expected: "3"
      limit: 3
    command: echo once
`;

test('preconditions and repeatPolicy conditions read earlier steps\' exit codes, output files and their contents', async () => {
  await server.writeDag('cond-refs', SPEC);
  const run = await server.startAndWait('cond-refs');
  const nodes = new Map((run.nodes as Array<{ step: { name: string }; statusLabel: string; doneCount: number; error: string }>).map((node) => [node.step.name, node]));
  assert.equal(nodes.get('first')!.statusLabel, 'failed');
  assert.equal(nodes.get('when-three')!.statusLabel, 'succeeded', nodes.get('when-three')!.error);
  assert.equal(nodes.get('when-zero')!.statusLabel, 'skipped');
  assert.match(nodes.get('when-zero')!.error, /is "3", expected "0"/);
  assert.equal(nodes.get('file-has-text')!.statusLabel, 'succeeded', nodes.get('file-has-text')!.error);
  assert.equal(nodes.get('file-says-hello')!.statusLabel, 'succeeded', nodes.get('file-says-hello')!.error);
  assert.equal(await server.stepLog('cond-refs', run.dagRunId, 'file-says-hello'), 'said-hello');
  // Until the condition holds: it holds after the first execution.
  assert.equal(nodes.get('until-three')!.statusLabel, 'succeeded');
  assert.equal(nodes.get('until-three')!.doneCount, 1);
});

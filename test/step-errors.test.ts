// A failed step's error in Dagu 1.30.2's form (`failed to execute step "x": exit status N` and the
// tail of its stderr), the empty stdout log of a silent step, and handler nodes as Dagu reports
// them; on the real server, with real processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { sharedServer } from './helpers.ts';

const SECRET_ENV = 'TROUPE_TEST_STEP_ERRORS_SECRET';
process.env[SECRET_ENV] = 'hush-hush-value';
const server = sharedServer('uws');

async function run(name: string, spec: string): Promise<any> {
  await server.writeDag(name, spec);
  return server.startAndWait(name);
}

const node = (run: any, name: string) => run.nodes.find((one: any) => one.step.name === name);

test('a failed step\'s error names it, then the last 1024 bytes of its stderr as written (masked), as Dagu\'s does', async () => {
  const dagRun = await run('errs_form', [
    'type: graph',
    'secrets:',
    '  - name: TOKEN',
    '    provider: env',
    `    key: ${SECRET_ENV}`,
    'steps:',
    '  - name: with_stderr',
    '    command: sh -c \'echo out; echo oops >&2; exit 3\'',
    '  - name: no_stderr',
    '    command: sh -c \'echo out; exit 4\'',
    '  - name: long',
    '    script: |',
    '      i=0; while [ $i -lt 100 ]; do echo "line $i of the long stderr output xxxxxxxxxxxxxxxx" >&2; i=$((i+1)); done; exit 5',
    '  - name: no_newline',
    '    script: printf \'first\\nno newline at end\' >&2; exit 6',
    '  - name: killed',
    '    script: echo before >&2; kill -9 $$',
    '  - name: secret',
    '    command: sh -c \'echo "token is $TOKEN" >&2; exit 2\'',
    '  - name: retried',
    '    command: sh -c \'echo attempt >&2; exit 7\'',
    '    retryPolicy: {limit: 2, intervalSec: 0}',
    '  - name: slow',
    '    command: sh -c \'echo slow >&2; sleep 5\'',
    '    timeoutSec: 1',
    '',
  ].join('\n'));
  assert.equal(node(dagRun, 'with_stderr').error, 'failed to execute step "with_stderr": exit status 3\nrecent stderr (tail):\noops\n');
  assert.equal(node(dagRun, 'no_stderr').error, 'failed to execute step "no_stderr": exit status 4', 'no tail without stderr');
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i} of the long stderr output xxxxxxxxxxxxxxxx\n`).join('');
  assert.equal(node(dagRun, 'long').error, `failed to execute step "long": exit status 5\nrecent stderr (tail):\n${lines.slice(-1024)}`);
  assert.ok(lines.slice(-1024).startsWith('xxx\nline 80 '), 'cut mid-line, as Dagu cuts it');
  assert.equal(node(dagRun, 'no_newline').error, 'failed to execute step "no_newline": exit status 6\nrecent stderr (tail):\nfirst\nno newline at end');
  assert.equal(node(dagRun, 'killed').error, 'failed to execute step "killed": signal: SIGKILL\nrecent stderr (tail):\nbefore\n');
  assert.equal(node(dagRun, 'secret').error, 'failed to execute step "secret": exit status 2\nrecent stderr (tail):\ntoken is *******\n');
  // Each retry appends to the same log; the tail is the last execution's alone.
  assert.equal(await readFile(node(dagRun, 'retried').stderr, 'utf8'), 'attempt\nattempt\nattempt\n');
  assert.equal(node(dagRun, 'retried').error, 'failed to execute step "retried": exit status 7\nrecent stderr (tail):\nattempt\n');
  assert.equal(node(dagRun, 'slow').error, 'step timed out after 1s', 'a step\'s own timeout is not wrapped, as in Dagu');

  const runLog = (await server.call('GET', `/dag-runs/errs_form/${dagRun.dagRunId}/log?limit=10000`)).body.content as string;
  assert.ok(runLog.includes('step=with_stderr status=failed error="failed to execute step \\"with_stderr\\": exit status 3\\nrecent stderr (tail):\\noops\\n"'), runLog);
  assert.ok(!runLog.includes('hush-hush-value'), 'the secret is masked in the run log');

  const events: any[] = [];
  for await (const event of server.troupe.engine.events({ since: 0, filter: { dagRunId: dagRun.dagRunId, types: ['step.failed'] }, signal: AbortSignal.timeout(2_000) })) {
    events.push(event);
    if (events.length === 8) break;
  }
  assert.equal(events.find((event) => event.stepName === 'no_stderr')?.error, 'failed to execute step "no_stderr": exit status 4');
});

test('handlers and markSuccess keep the executor\'s error unwrapped; continueOn failure is wrapped', async () => {
  const dagRun = await run('errs_unwrapped', [
    'handlerOn:',
    '  failure:',
    '    command: sh -c \'echo handler-bad >&2; exit 9\'',
    'steps:',
    '  - name: marked',
    '    command: sh -c \'echo bad >&2; exit 3\'',
    '    continueOn: {failure: true, markSuccess: true}',
    '  - name: continued',
    '    command: sh -c \'exit 2\'',
    '    continueOn: {failure: true}',
    '  - name: last',
    '    command: exit 1',
    '',
  ].join('\n'));
  assert.deepEqual([node(dagRun, 'marked').statusLabel, node(dagRun, 'marked').error], ['succeeded', 'exit status 3\nrecent stderr (tail):\nbad\n']);
  assert.equal(node(dagRun, 'continued').error, 'failed to execute step "continued": exit status 2');
  assert.equal(node(dagRun, 'last').error, 'failed to execute step "last": exit status 1');
  assert.deepEqual([dagRun.onFailure.statusLabel, dagRun.onFailure.error], ['failed', 'exit status 9\nrecent stderr (tail):\nhandler-bad\n']);
});

test('a step that ran and printed nothing has its stdout log, empty, as Dagu\'s steps do', async () => {
  const dagRun = await run('errs_silent', [
    'type: graph',
    'steps:',
    '  - name: quiet',
    '    command: "true"',
    '  - name: quiet_fail',
    '    command: "false"',
    '    continueOn: {failure: true}',
    '  - name: quiet_jq',
    '    executor: jq',
    '    command: .a | empty',
    '    script: \'{"a": 1}\'',
    '',
  ].join('\n'));
  for (const name of ['quiet', 'quiet_fail', 'quiet_jq']) {
    const file = await stat(node(dagRun, name).stdout);
    assert.deepEqual([file.isFile(), file.size], [true, 0], name);
  }
});

test('handler nodes in run details as Dagu\'s: doneCount 0, no onInit; absent handlers are null', async () => {
  const dagRun = await run('errs_handlers', [
    'handlerOn:',
    '  init: echo init',
    '  success: echo success',
    '  failure: echo failure',
    '  exit: echo exit',
    'steps:',
    '  - echo a',
    '',
  ].join('\n'));
  assert.equal('onInit' in dagRun, false);
  assert.deepEqual(['onSuccess', 'onFailure', 'onCancel', 'onExit'].map((name) => dagRun[name] && [dagRun[name].statusLabel, dagRun[name].doneCount]),
    [['succeeded', 0], ['not_started', 0], null, ['succeeded', 0]]);
  assert.equal(dagRun.nodes[0].doneCount, 1, 'a step\'s execution counts');
  // The init handler ran all the same: its log is found by its name.
  assert.equal(await server.stepLog('errs_handlers', dagRun.dagRunId, 'onInit'), 'init');
  const none = await run('errs_no_handlers', 'steps:\n  - echo a\n');
  assert.deepEqual([none.onSuccess, none.onFailure, none.onCancel, none.onExit, 'onInit' in none], [null, null, null, null, false]);
});

// Run semantics over HTTP on the real server: retries, repeats, timeouts and the initial delay, with
// real processes and the server's own timestamps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedServer } from './helpers.ts';

const server = sharedServer('uws');

async function run(name: string, spec: string): Promise<any> {
  await server.writeDag(name, spec);
  const { body } = await server.call('POST', `/dags/${name}/start`, {});
  return server.waitForRun(name, body.dagRunId);
}

test('retryPolicy: a failing step runs again up to the limit, counting retries; the exit code filter decides', async () => {
  const counter = join(server.home, 'retry-count');
  const flaky = await run('retry-flaky', [
    'steps:',
    '  - name: flaky',
    `    command: n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; echo "try $n"; [ $n -ge 3 ]`,
    '    retryPolicy: {limit: 5, intervalSec: 0}',
    '',
  ].join('\n'));
  assert.deepEqual([flaky.statusLabel, flaky.nodes[0].statusLabel, flaky.nodes[0].retryCount], ['succeeded', 'succeeded', 2]);
  assert.equal(await readFile(flaky.nodes[0].stdout, 'utf8'), 'try 1\ntry 2\ntry 3\n', 'every attempt writes to the step log');

  const exhausted = await run('retry-exhausted', 'steps:\n  - name: never\n    command: exit 7\n    retryPolicy: {limit: 2, intervalSec: 0}\n');
  assert.deepEqual([exhausted.statusLabel, exhausted.nodes[0].retryCount, exhausted.nodes[0].error], ['failed', 2, 'failed to execute step "never": exit status 7']);

  const filtered = await run('retry-filtered', 'steps:\n  - name: other\n    command: exit 3\n    retryPolicy: {limit: 4, intervalSec: 0, exitCode: [75]}\n');
  assert.deepEqual([filtered.statusLabel, filtered.nodes[0].retryCount], ['failed', 0]);
});

test('repeatPolicy: while and until on exit codes and conditions, up to the limit, counting executions', async () => {
  const counter = join(server.home, 'repeat-count');
  const until = await run('repeat-until', [
    'steps:',
    '  - name: poll',
    `    command: n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; [ $n -ge 3 ]`,
    '    repeatPolicy: {repeat: until, exitCode: [0], intervalSec: 0}',
    '',
  ].join('\n'));
  assert.deepEqual([until.statusLabel, until.nodes[0].doneCount], ['succeeded', 3]);

  const limited = await run('repeat-limit', 'steps:\n  - name: tick\n    command: echo tick\n    repeatPolicy: {repeat: true, limit: 4, intervalSec: 0}\n');
  assert.deepEqual([limited.statusLabel, limited.nodes[0].doneCount], ['succeeded', 4]);
  assert.equal(await readFile(limited.nodes[0].stdout, 'utf8'), 'tick\ntick\ntick\ntick\n');

  const file = join(server.home, 'repeat-flag');
  const whileCondition = await run('repeat-while', [
    'steps:',
    '  - name: drain',
    `    command: n=$(cat ${file} 2>/dev/null || echo 0); echo $((n+1)) > ${file}`,
    '    repeatPolicy:',
    '      repeat: while',
    `      condition: "\`cat ${file}\`"`,
    '      expected: "re:^[12]$"',
    '      intervalSec: 0',
    '',
  ].join('\n'));
  assert.deepEqual([whileCondition.statusLabel, whileCondition.nodes[0].doneCount], ['succeeded', 3], 'runs while the file holds 1 or 2');
});

test('timeouts: a step past its timeoutSec fails and the run goes on its rules; a DAG past its own fails with running steps aborted', async () => {
  const step = await run('step-timeout', 'type: graph\nsteps:\n  - name: slow\n    command: sleep 30\n    timeoutSec: 1\n  - name: quick\n    command: echo quick\n');
  assert.deepEqual([step.statusLabel, step.nodes[0].statusLabel, step.nodes[0].error, step.nodes[1].statusLabel],
    ['failed', 'failed', 'step timed out after 1s', 'succeeded']);
  const elapsed = Date.parse(step.nodes[0].finishedAt) - Date.parse(step.nodes[0].startedAt);
  assert.ok(elapsed >= 1000 && elapsed < 10_000, `stopped at its timeout (${elapsed} ms)`);

  const dag = await run('dag-timeout', 'timeoutSec: 1\nsteps:\n  - name: long\n    command: sleep 30\n  - name: next\n    command: echo never\n');
  assert.deepEqual([dag.statusLabel, dag.nodes[0].statusLabel, dag.nodes[1].statusLabel], ['failed', 'aborted', 'not_started']);
  const log = await server.call('GET', `/dag-runs/dag-timeout/${dag.dagRunId}/log`);
  assert.match(log.body.content, /msg="DAG run timed out" .* timeout=1s/);
});

test('delaySec holds the first step back; the run shows running meanwhile', async () => {
  await server.writeDag('delayed', 'delaySec: 1\nsteps:\n  - name: later\n    command: echo later\n');
  const { body } = await server.call('POST', '/dags/delayed/start', {});
  const early = (await server.call('GET', `/dag-runs/delayed/${body.dagRunId}`)).body.dagRun;
  assert.deepEqual([early.statusLabel, early.nodes[0].statusLabel], ['running', 'not_started']);
  const done = await server.waitForRun('delayed', body.dagRunId);
  const waited = Date.parse(done.nodes[0].startedAt) - Date.parse(done.startedAt);
  assert.ok(waited >= 1000, `the first step started ${waited} ms after the run`);
  assert.equal(done.statusLabel, 'succeeded');
});

test('the outputs document: camelCase keys, key and omit, the later step wins, secrets masked, latest; unknown runs are 404', async () => {
  process.env.TROUPE_TEST_OUT_SECRET = 's3cr3t-value';
  const finished = await run('outs', [
    'secrets:',
    '  - {name: TOKEN, provider: env, key: TROUPE_TEST_OUT_SECRET}',
    'steps:',
    '  - name: count',
    '    command: echo 42',
    '    output: TOTAL_COUNT',
    '  - name: renamed',
    '    command: echo custom',
    '    output: {name: RAW, key: myKey}',
    '  - name: hidden',
    '    command: echo hidden',
    '    output: {name: PRIVATE, omit: true}',
    '  - name: leak',
    '    command: echo "token=$TOKEN private=$PRIVATE"',
    '    output: TOTAL_COUNT',
    '',
  ].join('\n'));
  assert.equal(finished.statusLabel, 'succeeded');
  const document = (await server.call('GET', `/dag-runs/outs/${finished.dagRunId}/outputs`)).body;
  assert.deepEqual(document, {
    metadata: { dagName: 'outs', dagRunId: finished.dagRunId, attemptId: document.metadata.attemptId, status: 'succeeded', completedAt: finished.finishedAt, params: '' },
    outputs: { totalCount: 'token=******* private=hidden', myKey: 'custom' },
  });
  assert.match(document.metadata.attemptId, /^[0-9a-f]{6}$/);
  assert.deepEqual((await server.call('GET', '/dag-runs/outs/latest/outputs')).body, document);

  const none = await run('no-outs', 'steps:\n  - echo nothing\n');
  assert.deepEqual((await server.call('GET', `/dag-runs/no-outs/${none.dagRunId}/outputs`)).body.outputs, {});
  const missing = await server.call('GET', '/dag-runs/no-outs/nope/outputs');
  assert.deepEqual([missing.status, missing.body.code], [404, 'not_found']);
});

const stepLog = async (name: string, dagRunId: string, path: string) => readFile(path, 'utf8').catch(() => '');
/** The run's log, where the init handler's end is told (run details leave its node out, as Dagu's do). */
const runLog = async (name: string, dagRunId: string) => (await server.call('GET', `/dag-runs/${name}/${dagRunId}/log`)).body.content as string;
const initStatus = async (name: string, dagRunId: string) => /msg="Handler finished" .*handler=onInit status=(\S+)/.exec(await runLog(name, dagRunId))?.[1];

test('lifecycle handlers: init before the steps, the outcome handler, exit last, with DAG_RUN_STATUS; handler nodes in details', async () => {
  const handlers = [
    'handlerOn:',
    '  init: echo "init $DAG_RUN_STATUS"',
    '  success: echo "success $DAG_RUN_STATUS"',
    '  failure: echo "failure $DAG_RUN_STATUS"',
    '  cancel: echo "abort $DAG_RUN_STATUS"',
    '  exit: echo "exit $DAG_RUN_STATUS $DAG_NAME $DAG_RUN_ID"',
  ].join('\n');
  const ok = await run('handled-ok', `${handlers}\nsteps:\n  - name: work\n    command: echo work\n`);
  assert.equal(ok.statusLabel, 'succeeded');
  assert.deepEqual([await initStatus('handled-ok', ok.dagRunId), ok.onSuccess.statusLabel, ok.onFailure.statusLabel, ok.onCancel.statusLabel, ok.onExit.statusLabel],
    ['succeeded', 'succeeded', 'not_started', 'not_started', 'succeeded']);
  assert.equal('onInit' in ok, false, 'no init handler node in run details, as in Dagu');
  assert.deepEqual([ok.onSuccess.doneCount, ok.onExit.doneCount], [0, 0], 'handler executions are not counted, as in Dagu');
  assert.equal(ok.onExit.step.name, 'onExit');
  assert.equal((await server.call('GET', `/dag-runs/handled-ok/${ok.dagRunId}/steps/onInit/log`)).body.content, 'init running');
  assert.equal(await stepLog('handled-ok', ok.dagRunId, ok.onSuccess.stdout), 'success succeeded\n');
  assert.equal(await stepLog('handled-ok', ok.dagRunId, ok.onExit.stdout), `exit succeeded handled-ok ${ok.dagRunId}\n`);
  const okLog = await runLog('handled-ok', ok.dagRunId);
  assert.ok(okLog.indexOf('handler=onInit status=succeeded') < okLog.indexOf('msg="Step started"'), 'init ends before the first step starts');
  assert.ok(Date.parse(ok.nodes[0].finishedAt) <= Date.parse(ok.onSuccess.startedAt));
  assert.ok(Date.parse(ok.onSuccess.finishedAt) <= Date.parse(ok.onExit.startedAt), 'exit runs last');

  const failed = await run('handled-fail', `${handlers}\nsteps:\n  - name: work\n    command: exit 2\n`);
  assert.deepEqual([failed.statusLabel, failed.onSuccess.statusLabel, failed.onFailure.statusLabel], ['failed', 'not_started', 'succeeded']);
  assert.equal(await stepLog('handled-fail', failed.dagRunId, failed.onExit.stdout), `exit failed handled-fail ${failed.dagRunId}\n`);

  const initFails = await run('handled-init', `${handlers.replace('echo "init $DAG_RUN_STATUS"', 'exit 1')}\nsteps:\n  - name: work\n    command: echo never\n`);
  assert.deepEqual([initFails.statusLabel, initFails.nodes[0].statusLabel, await initStatus('handled-init', initFails.dagRunId), initFails.onCancel.statusLabel, initFails.onExit.statusLabel],
    ['aborted', 'not_started', 'failed', 'succeeded', 'succeeded'], 'a failed init aborts the run; abort runs, then exit');
  assert.equal(await stepLog('handled-init', initFails.dagRunId, initFails.onExit.stdout), `exit aborted handled-init ${initFails.dagRunId}\n`);

  const ticked = await run('handled-tick', 'handlerOn:\n  exit:\n    command: echo "$WHEN"\n    env:\n      - WHEN: "`echo at-$DAG_RUN_STATUS`"\nsteps:\n  - echo fine\n');
  assert.equal(await readFile(ticked.onExit.stdout, 'utf8'), 'at-succeeded\n', 'a handler\'s env runs its backtick commands too');

  const badExit = await run('handled-badexit', 'handlerOn:\n  exit: exit 3\nsteps:\n  - echo fine\n');
  assert.deepEqual([badExit.statusLabel, badExit.onExit.statusLabel], ['failed', 'failed'], 'a failing handler fails the run');
});

test('stopping a run runs its abort handler and then its exit handler', async () => {
  await server.writeDag('handled-stop', 'handlerOn:\n  abort: echo "abort $DAG_RUN_STATUS"\n  exit: echo "exit $DAG_RUN_STATUS"\nsteps:\n  - name: long\n    command: sleep 30\n');
  const { body } = await server.call('POST', '/dags/handled-stop/start', {});
  await server.waitForRun('handled-stop', body.dagRunId, (run) => run.nodes[0].status === 1);
  assert.equal((await server.call('POST', `/dag-runs/handled-stop/${body.dagRunId}/stop`)).status, 200);
  const stopped = await server.waitForRun('handled-stop', body.dagRunId);
  assert.deepEqual([stopped.statusLabel, stopped.nodes[0].statusLabel, stopped.onCancel.statusLabel, stopped.onExit.statusLabel],
    ['aborted', 'aborted', 'succeeded', 'succeeded']);
  assert.equal(await readFile(stopped.onCancel.stdout, 'utf8'), 'abort aborted\n');
});

test('a DAG-level precondition that does not hold aborts the run with its steps not started, and the exit handler still runs', async () => {
  const unmet = await run('unmet-exit', 'preconditions:\n  - "false"\nhandlerOn:\n  failure: echo never\n  exit: echo "exit $DAG_RUN_STATUS"\nsteps:\n  - echo never\n');
  assert.deepEqual([unmet.statusLabel, unmet.nodes[0].statusLabel, unmet.onFailure.statusLabel, unmet.onExit.statusLabel],
    ['aborted', 'not_started', 'not_started', 'succeeded']);
  assert.equal(await readFile(unmet.onExit.stdout, 'utf8'), 'exit aborted\n');
});

test('retry: the same id as a new attempt re-runs failed nodes and what follows, keeping the rest and their outputs; a new id makes a new run; stepName re-runs one step', async () => {
  const marker = join(server.home, 'retry-marker');
  const spec = [
    'steps:',
    '  - name: first',
    '    command: echo kept-value',
    '    output: KEPT',
    '  - name: gate',
    `    command: test -f ${marker}`,
    '  - name: last',
    '    command: echo "last saw $KEPT"',
    '',
  ].join('\n');
  const failed = await run('retrying', spec);
  assert.deepEqual([failed.statusLabel, ...failed.nodes.map((node: { statusLabel: string }) => node.statusLabel)], ['failed', 'succeeded', 'failed', 'aborted']);
  const firstAttempt = (await server.call('GET', `/dag-runs/retrying/${failed.dagRunId}/outputs`)).body.metadata.attemptId;

  await writeFile(marker, '');
  assert.equal((await server.call('POST', `/dag-runs/retrying/${failed.dagRunId}/retry`, {})).status, 200);
  const retried = await server.waitForRun('retrying', failed.dagRunId, (r) => r.status !== 1 && r.startedAt !== failed.startedAt);
  assert.deepEqual([retried.statusLabel, ...retried.nodes.map((node: { statusLabel: string }) => node.statusLabel)], ['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  assert.equal(retried.nodes[0].startedAt, failed.nodes[0].startedAt, 'the succeeded step kept its result');
  assert.equal(await readFile(retried.nodes[2].stdout, 'utf8'), 'last saw kept-value\n', 'a kept output reaches the steps that run again');
  const secondAttempt = (await server.call('GET', `/dag-runs/retrying/${failed.dagRunId}/outputs`)).body.metadata.attemptId;
  assert.notEqual(secondAttempt, firstAttempt, 'a retry is a new attempt');

  assert.equal((await server.call('POST', `/dag-runs/retrying/${failed.dagRunId}/retry`, { dagRunId: 'retry-copy', stepName: 'last' })).status, 200);
  const copy = await server.waitForRun('retrying', 'retry-copy');
  assert.deepEqual([copy.statusLabel, copy.nodes[2].statusLabel], ['succeeded', 'succeeded']);
  assert.equal(copy.nodes[0].startedAt, retried.nodes[0].startedAt, 'steps other than stepName keep their results');
  assert.notEqual(copy.nodes[2].startedAt, retried.nodes[2].startedAt);

  const missing = await server.call('POST', '/dag-runs/retrying/nope/retry', {});
  assert.deepEqual([missing.status, missing.body.code], [404, 'not_found']);
  await server.writeDag('retry-busy', 'steps:\n  - name: long\n    command: sleep 30\n');
  const { body } = await server.call('POST', '/dags/retry-busy/start', {});
  const busy = await server.call('POST', `/dag-runs/retry-busy/${body.dagRunId}/retry`, {});
  assert.deepEqual([busy.status, busy.body.code], [400, 'already_running']);
  await server.call('POST', `/dag-runs/retry-busy/${body.dagRunId}/stop`);
});

test('PATCH a step status: 0 to 5 sets it; anything else is 400; an unknown step or run is 404', async () => {
  const failed = await run('patching', 'steps:\n  - name: broken\n    command: exit 1\n');
  const path = `/dag-runs/patching/${failed.dagRunId}/steps/broken/status`;
  const patched = await server.call('PATCH', path, { status: 4 });
  assert.deepEqual([patched.status, patched.text], [200, '']);
  const after = (await server.call('GET', `/dag-runs/patching/${failed.dagRunId}`)).body.dagRun;
  assert.deepEqual([after.nodes[0].status, after.nodes[0].statusLabel], [4, 'succeeded']);
  for (const bad of [{ status: 6 }, { status: -1 }, { status: 'done' }, {}]) {
    const response = await server.call('PATCH', path, bad);
    assert.deepEqual([response.status, response.body.code], [400, 'bad_request'], JSON.stringify(bad));
  }
  assert.equal((await server.call('PATCH', `/dag-runs/patching/${failed.dagRunId}/steps/ghost/status`, { status: 4 })).status, 404);
  assert.equal((await server.call('PATCH', '/dag-runs/patching/nope/steps/broken/status', { status: 4 })).status, 404);
});

test('sub DAG runs: call a DAG file or a local DAG with params, read the child result, fan out with ITEM; the 4.8 endpoints', async () => {
  await server.writeDag('child', 'params:\n  - X: "0"\nsteps:\n  - name: c1\n    command: echo "child $X"\n    output: COUT\n');
  const parent = await run('parent', [
    'type: graph',
    'steps:',
    '  - name: call-child',
    '    call: child',
    '    params: "X=1"',
    '    output: CHILD',
    '  - name: local',
    '    call: helper',
    '    params:',
    '      Y: two',
    '  - name: show',
    '    command: echo "${CHILD.outputs.COUT} ${CHILD.status}"',
    '    depends: [call-child]',
    '  - name: fan',
    '    call: helper',
    '    parallel:',
    '      items: [a, b, c]',
    '      maxConcurrent: 2',
    '    params: "Y=${ITEM}"',
    '---',
    'name: helper',
    'params:',
    '  - Y: none',
    'steps:',
    '  - name: h1',
    '    command: echo "helper $Y"',
    '',
  ].join('\n'));
  assert.equal(parent.statusLabel, 'succeeded');
  const [callChild, local, show, fan] = parent.nodes;
  assert.deepEqual(callChild.subRuns.map((sub: { params: string }) => sub.params), ['X=1']);
  assert.deepEqual(local.subRuns.map((sub: { params: string }) => sub.params), ['Y="two"']);
  assert.deepEqual(fan.subRuns.map((sub: { params: string }) => sub.params).sort(), ['Y=a', 'Y=b', 'Y=c']);
  assert.equal(await readFile(show.stdout, 'utf8'), 'child 1 succeeded\n');

  const listed = (await server.call('GET', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs`)).body.subRuns;
  assert.equal(listed.length, 5);
  assert.ok(listed.every((sub: { status: number; startedAt: string; finishedAt: string }) => sub.status === 4 && sub.startedAt && sub.finishedAt));
  const childId = callChild.subRuns[0].dagRunId;
  const details = (await server.call('GET', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs/${childId}`)).body.dagRunDetails;
  assert.deepEqual([details.name, details.rootDAGRunName, details.rootDAGRunId, details.parentDAGRunName, details.parentDAGRunId, details.statusLabel],
    ['child', 'parent', parent.dagRunId, 'parent', parent.dagRunId, 'succeeded']);
  assert.equal(details.onExit, null);
  assert.deepEqual(details.preconditions, []);
  const stepLog = await server.call('GET', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs/${childId}/steps/c1/log`);
  assert.equal(stepLog.body.content, 'child 1');
  const runLog = await server.call('GET', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs/${childId}/log`);
  assert.match(runLog.body.content, /DAG run finished/);
  const patched = await server.call('PATCH', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs/${childId}/steps/c1/status`, { status: 2 });
  assert.equal(patched.status, 200);
  assert.equal((await server.call('GET', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs/${childId}`)).body.dagRunDetails.nodes[0].status, 2);
  assert.equal((await server.call('GET', `/dag-runs/parent/${parent.dagRunId}/sub-dag-runs/nope`)).status, 404);
  assert.equal((await server.call('GET', '/dag-runs/parent/nope/sub-dag-runs')).status, 404);
  const topLevel = (await server.call('GET', '/dag-runs?name=child')).body.dagRuns;
  assert.equal(topLevel.length, 0, 'sub DAG runs are not listed as runs of their own');
});

test('a failing child fails its calling step; stopping a parent stops its children', async () => {
  await server.writeDag('bad-child', 'steps:\n  - exit 3\n');
  const failed = await run('calls-bad', 'steps:\n  - name: call\n    call: bad-child\n');
  assert.deepEqual([failed.statusLabel, failed.nodes[0].statusLabel], ['failed', 'failed']);
  assert.match(failed.nodes[0].error, /^failed to execute step "call": sub DAG run bad-child\/.+ failed$/);

  await server.writeDag('slow-child', 'steps:\n  - name: wait\n    command: sleep 30\n');
  await server.writeDag('calls-slow', 'steps:\n  - name: call\n    call: slow-child\n');
  const { body } = await server.call('POST', '/dags/calls-slow/start', {});
  const running = await server.waitForRun('calls-slow', body.dagRunId, (r) => r.nodes[0].subRuns.length > 0);
  const childId = running.nodes[0].subRuns[0].dagRunId;
  await server.call('POST', `/dag-runs/calls-slow/${body.dagRunId}/stop`);
  const stopped = await server.waitForRun('calls-slow', body.dagRunId);
  assert.equal(stopped.statusLabel, 'aborted');
  const child = (await server.call('GET', `/dag-runs/calls-slow/${body.dagRunId}/sub-dag-runs/${childId}`)).body.dagRunDetails;
  assert.deepEqual([child.statusLabel, child.nodes[0].statusLabel], ['aborted', 'aborted']);
});

test('a step\'s stdout and stderr fields send its output to those files as well as to its logs', async () => {
  const finished = await run('copies', 'steps:\n  - name: both\n    command: echo out; echo err >&2\n    stdout: copies/out.txt\n    stderr: copies/err.txt\n');
  assert.equal(finished.statusLabel, 'succeeded');
  const dir = join(server.home, 'dags', 'copies');
  assert.deepEqual([await readFile(join(dir, 'out.txt'), 'utf8'), await readFile(join(dir, 'err.txt'), 'utf8')], ['out\n', 'err\n']);
  assert.equal(await readFile(finished.nodes[0].stdout, 'utf8'), 'out\n');
});

test('a repeated call keeps the sub DAG runs of earlier executions in subRunsRepeated', async () => {
  await server.writeDag('tiny', 'steps:\n  - echo tiny\n');
  const repeated = await run('repeat-call', 'steps:\n  - name: again\n    call: tiny\n    repeatPolicy: {repeat: true, limit: 3, intervalSec: 0}\n');
  assert.equal(repeated.statusLabel, 'succeeded');
  assert.deepEqual([repeated.nodes[0].doneCount, repeated.nodes[0].subRuns.length, repeated.nodes[0].subRunsRepeated.length], [3, 1, 2]);
});

test('after a retry of the parent, the sub DAG run of a kept calling step is still reachable', async () => {
  const flag = join(server.home, 'retry-parent-flag');
  await server.writeDag('kept-child', 'steps:\n  - echo kept\n');
  const first = await run('retry-parent', `steps:\n  - name: c\n    call: kept-child\n  - name: f\n    command: test -f ${flag}\n    depends: [c]\n`);
  assert.equal(first.statusLabel, 'failed');
  const childId = first.nodes[0].subRuns[0].dagRunId;
  await writeFile(flag, '');
  const retried = await server.call('POST', `/dag-runs/retry-parent/${first.dagRunId}/retry`, {});
  assert.equal(retried.status, 200);
  const second = await server.waitForRun('retry-parent', first.dagRunId, (run) => run.status === 4);
  assert.equal(second.statusLabel, 'succeeded');
  assert.deepEqual(second.nodes[0].subRuns.map((sub: any) => sub.dagRunId), [childId]);
  const listed = (await server.call('GET', `/dag-runs/retry-parent/${first.dagRunId}/sub-dag-runs`)).body.subRuns;
  assert.deepEqual(listed.map((sub: any) => [sub.dagRunId, sub.statusLabel]), [[childId, 'succeeded']]);
  const details = await server.call('GET', `/dag-runs/retry-parent/${first.dagRunId}/sub-dag-runs/${childId}`);
  assert.equal(details.status, 200);
  assert.equal(details.body.dagRunDetails.name, 'kept-child');
});

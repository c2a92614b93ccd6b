// Sub DAG rules: what Dagu 1.30.2 does with `call`/`run` targets, partially succeeded
// children, fan-out items and the child results a calling step captures (docs/api.md, Sub DAG runs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedServer } from './helpers.ts';

const server = sharedServer();

async function create(name: string, spec: string) {
  const created = await server.call('POST', '/dags', { name, spec });
  assert.equal(created.status, 201, created.text);
}

/** The JSON a calling step captured in its output variable, read back through a later step's log. */
async function captured(name: string, dagRunId: string, step: string): Promise<any> {
  return JSON.parse(await server.stepLog(name, dagRunId, step));
}

test('rule 4: a call of a DAG that does not exist is accepted at validate, create and edit; the step fails when it runs; cycles stay errors', async () => {
  const spec = 'steps:\n  - name: call\n    call: later-child\n  - name: local\n    run: missing-local\n    depends: []\n';
  const validated = await server.call('POST', '/dags/validate', { spec, name: 'early-caller' });
  assert.deepEqual([validated.body.valid, validated.body.errors], [true, []]);
  await create('early-caller', 'steps:\n  - name: call\n    call: not-yet\n');
  const edited = await server.call('PUT', '/dags/early-caller/spec', { spec: 'steps:\n  - name: call\n    call: later-child\n' });
  assert.equal(edited.status, 200, edited.text);
  assert.deepEqual(edited.body.errors ?? [], []);
  assert.deepEqual((await server.call('GET', '/dags/early-caller')).body.errors, []);

  const failed = await server.startAndWait('early-caller');
  assert.deepEqual([failed.statusLabel, failed.nodes[0].statusLabel], ['failed', 'failed']);
  assert.match(failed.nodes[0].error, /DAG later-child not found/);

  await create('later-child', 'steps:\n  - echo created later\n');
  const succeeded = await server.startAndWait('early-caller');
  assert.deepEqual([succeeded.statusLabel, succeeded.nodes[0].statusLabel], ['succeeded', 'succeeded']);

  // A target named through a variable is decided when the step runs.
  await create('variable-caller', 'env:\n  - TARGET: later-child\nsteps:\n  - name: call\n    call: ${TARGET}\n');
  const byVariable = await server.startAndWait('variable-caller');
  assert.deepEqual([byVariable.statusLabel, byVariable.nodes[0].subRuns.length], ['succeeded', 1]);

  // A cycle closed by a DAG created later is still found.
  await create('cycle-first', 'steps:\n  - call: cycle-second\n');
  const closing = await server.call('POST', '/dags', { name: 'cycle-second', spec: 'steps:\n  - call: cycle-first\n' });
  assert.equal(closing.status, 400);
  assert.match(closing.body.message, /call cycle: cycle-second -> cycle-first -> cycle-second/);
});

test('rule 16: a partially succeeded child makes its calling step and the parent partially succeeded', async () => {
  await create('partial-child', [
    'params: "x"',
    'steps:',
    '  - name: maybe',
    '    command: test "$1" != bad',
    '    continueOn: {failure: true}',
    '  - name: last',
    '    command: echo done',
    '',
  ].join('\n'));
  await create('partial-parent', [
    'steps:',
    '  - name: single',
    '    call: partial-child',
    '    params: "bad"',
    '    output: SINGLE',
    '  - name: fan',
    '    call: partial-child',
    '    parallel: [bad, good]',
    '    output: FAN',
    '  - name: after',
    '    command: printenv SINGLE',
    '',
  ].join('\n'));
  const run = await server.startAndWait('partial-parent');
  assert.deepEqual(run.nodes.map((node: any) => [node.status, node.statusLabel]),
    [[6, 'partially_succeeded'], [6, 'partially_succeeded'], [4, 'succeeded']]);
  assert.deepEqual([run.status, run.statusLabel], [6, 'partially_succeeded']);
  assert.equal((await captured('partial-parent', run.dagRunId, 'after')).status, 'partially_succeeded');

  // Something else failing still fails the parent.
  await create('partial-then-fail', 'type: graph\nsteps:\n  - name: single\n    call: partial-child\n    params: "bad"\n  - name: broken\n    command: exit 1\n');
  const failed = await server.startAndWait('partial-then-fail');
  assert.deepEqual([failed.statusLabel, failed.nodes[0].statusLabel], ['failed', 'partially_succeeded']);
});

test('rule 17: a fan-out without params hands each item to the child as $1', async () => {
  await create('item-child', 'steps:\n  - name: show\n    command: echo "first=[$1] item=[${ITEM:-unset}]"\n    output: SHOWN\n');
  await create('item-parent', [
    'steps:',
    '  - name: fan',
    '    call: item-child',
    '    parallel:',
    '      items: [one, "two words", 3]',
    '      maxConcurrent: 1',
    '    output: FAN',
    '  - name: show',
    '    command: printenv FAN',
    '',
  ].join('\n'));
  const run = await server.startAndWait('item-parent');
  assert.equal(run.statusLabel, 'succeeded');
  const fan = await captured('item-parent', run.dagRunId, 'show');
  assert.deepEqual(fan.outputs.map((outputs: any) => outputs.SHOWN),
    ['first=[one] item=[unset]', 'first=[two words] item=[unset]', 'first=[3] item=[unset]']);
  const children = await Promise.all(run.nodes[0].subRuns.map((sub: any) =>
    server.call('GET', `/dag-runs/item-parent/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}`).then((answer) => JSON.parse(answer.body.dagRunDetails.params))));
  assert.deepEqual(children, [{ 1: 'one' }, { 1: 'two words' }, { 1: '3' }]);
});

test('rule 18: items with identical child params start one sub run; a retried parent finds the same children', async () => {
  const trail = join(server.home, 'dedupe-trail');
  const flag = join(server.home, 'dedupe-flag');
  await create('dedupe-child', [
    'params:',
    '  - X: none',
    'steps:',
    '  - name: note',
    `    command: echo "$X" >> ${trail}`,
    '  - name: gate',
    `    command: test "$X" != b -o -f ${flag}`,
    '',
  ].join('\n'));
  await create('dedupe-parent', [
    'steps:',
    '  - name: fan',
    '    call: dedupe-child',
    '    params: "X=${ITEM}"',
    '    parallel: [a, b, a, b, a]',
    '    output: FAN',
    '    continueOn: {failure: true}',
    '  - name: show',
    '    command: printenv FAN',
    '',
  ].join('\n'));
  const first = await server.startAndWait('dedupe-parent');
  const fan = first.nodes[0];
  assert.equal(fan.statusLabel, 'failed');
  assert.deepEqual(fan.subRuns.map((sub: any) => sub.params), ['X=a', 'X=b']);
  const output = await captured('dedupe-parent', first.dagRunId, 'show');
  assert.deepEqual(output.summary, { total: 2, succeeded: 1, failed: 1 });
  assert.deepEqual(output.results.map((result: any) => [result.params, result.status]), [['X=a', 'succeeded'], ['X=b', 'failed']]);
  assert.equal(output.outputs.length, 2);
  const listed = (await server.call('GET', `/dag-runs/dedupe-parent/${first.dagRunId}/sub-dag-runs`)).body.subRuns;
  assert.equal(listed.length, 2);
  assert.deepEqual((await readFile(trail, 'utf8')).trim().split('\n').sort(), ['a', 'b']);

  // The retry runs the failed step again: each child is found under its id and runs again as a
  // new attempt of its own (its failed step only); no new sub run appears.
  await writeFile(flag, '');
  const ids = fan.subRuns.map((sub: any) => sub.dagRunId);
  const failedChild = (await server.call('GET', `/dag-runs/dedupe-parent/${first.dagRunId}/sub-dag-runs/${ids[1]}`)).body.dagRunDetails;
  const retried = await server.call('POST', `/dag-runs/dedupe-parent/${first.dagRunId}/retry`, {});
  assert.equal(retried.status, 200, retried.text);
  const second = await server.waitForRun('dedupe-parent', first.dagRunId, (run) => run.log !== first.log && ![0, 1, 5].includes(run.status));
  assert.deepEqual([second.statusLabel, second.nodes[0].statusLabel], ['succeeded', 'succeeded']);
  assert.deepEqual(second.nodes[0].subRuns.map((sub: any) => sub.dagRunId), ids);
  assert.equal((await server.call('GET', `/dag-runs/dedupe-parent/${first.dagRunId}/sub-dag-runs`)).body.subRuns.length, 2);
  const again = (await server.call('GET', `/dag-runs/dedupe-parent/${first.dagRunId}/sub-dag-runs/${ids[1]}`)).body.dagRunDetails;
  assert.notEqual(again.log, failedChild.log, 'a new attempt of the same run');
  assert.deepEqual(again.nodes.map((node: any) => node.statusLabel), ['succeeded', 'succeeded']);
  assert.deepEqual((await readFile(trail, 'utf8')).trim().split('\n').sort(), ['a', 'b'], 'the children\'s succeeded steps kept their results');
});

test('rule 19: a sub DAG result holds the child\'s effective params as KEY=value text; none when the child has none', async () => {
  await create('params-named', 'params:\n  - A: "1"\n  - B: "2"\nsteps:\n  - echo "$A $B"\n');
  await create('params-positional', 'params: "p q"\nsteps:\n  - echo "$1 $2"\n');
  await create('params-none', 'steps:\n  - echo none\n');
  await create('params-parent', [
    'type: graph',
    'steps:',
    '  - name: named',
    '    call: params-named',
    '    params: "C=4 B=3"',
    '    output: NAMED',
    '  - name: spaced',
    '    call: params-named',
    '    params:',
    '      A: two words',
    '    output: SPACED',
    '  - name: item',
    '    call: params-positional',
    '    parallel: [a]',
    '    output: ITEMS',
    '  - name: defaults',
    '    call: params-named',
    '    output: DEFAULTS',
    '  - name: none',
    '    call: params-none',
    '    output: NONE',
    '  - name: given',
    '    call: params-none',
    '    params: "Z=1"',
    '    output: GIVEN',
    '  - name: show',
    '    depends: [named, spaced, item, defaults, given]',
    '    command: printf "%s\\n%s\\n%s\\n%s\\n%s\\n" "${NAMED.params}" "${SPACED.params}" "${ITEMS.results.0.params}" "${DEFAULTS.params}" "${GIVEN.params}"',
    '  - name: shownone',
    '    depends: [none]',
    '    command: printenv NONE',
    '',
  ].join('\n'));
  const run = await server.startAndWait('params-parent');
  assert.equal(run.statusLabel, 'succeeded');
  assert.deepEqual((await server.stepLog('params-parent', run.dagRunId, 'show')).split('\n'),
    ['A=1 B=3 C=4', 'A=two words B=2', '1=a 2=q', 'A=1 B=2', 'Z=1']);
  assert.deepEqual(Object.keys(await captured('params-parent', run.dagRunId, 'shownone')), ['name', 'dagRunId', 'outputs', 'status']);
});

test('the rules hold for handlers: an exit handler calls a sub DAG with a fan-out; a handler retries', async () => {
  const flag = join(server.home, 'handler-retried');
  await create('handler-child', 'steps:\n  - name: check\n    command: test "$1" = a\n');
  await create('handler-parent', [
    'handlerOn:',
    '  success:',
    `    command: test -f ${flag} || { touch ${flag}; exit 1; }`,
    '    retryPolicy: {limit: 1, intervalSec: 0}',
    '  exit:',
    '    call: handler-child',
    '    parallel: [a, a]',
    'steps:',
    '  - echo main',
    '',
  ].join('\n'));
  const run = await server.startAndWait('handler-parent');
  assert.equal(run.statusLabel, 'succeeded');
  assert.deepEqual([run.onSuccess.statusLabel, run.onSuccess.retryCount], ['succeeded', 1]);
  assert.equal(run.onExit.statusLabel, 'succeeded');
  assert.equal(run.onExit.subRuns.length, 1);
  const child = (await server.call('GET', `/dag-runs/handler-parent/${run.dagRunId}/sub-dag-runs/${run.onExit.subRuns[0].dagRunId}`)).body.dagRunDetails;
  assert.deepEqual([child.name, child.statusLabel, JSON.parse(child.params)], ['handler-child', 'succeeded', { 1: 'a' }]);
});

test('a call param whose value holds spaces reaches the child whole, through three levels', async () => {
  await server.writeDag('chain-root', 'params:\n  - MSG: "Received FromRoot"\nsteps:\n  - name: to-mid\n    call: chain-mid\n    params: "MSG=${MSG}"\n');
  await server.writeDag('chain-mid', 'params:\n  - MSG: none\nsteps:\n  - name: to-leaf\n    call: chain-leaf\n    params: "MSG=${MSG}"\n');
  await server.writeDag('chain-leaf', 'params:\n  - MSG: none\nsteps:\n  - name: say\n    command: echo "leaf got ${MSG}"\n');
  const run = await server.startAndWait('chain-root');
  assert.equal(run.statusLabel, 'succeeded');
  const mid = (await server.call('GET', `/dag-runs/chain-root/${run.dagRunId}/sub-dag-runs/${run.nodes[0].subRuns[0].dagRunId}`)).body.dagRunDetails;
  assert.deepEqual(JSON.parse(mid.params), { MSG: 'Received FromRoot' });
  const leaf = (await server.call('GET', `/dag-runs/chain-root/${run.dagRunId}/sub-dag-runs/${mid.nodes[0].subRuns[0].dagRunId}`)).body.dagRunDetails;
  assert.deepEqual(JSON.parse(leaf.params), { MSG: 'Received FromRoot' });
  const said = await server.call('GET', `/dag-runs/chain-root/${run.dagRunId}/sub-dag-runs/${leaf.dagRunId}/steps/say/log`);
  assert.equal(said.body.content, 'leaf got Received FromRoot');
  // The calling step's log holds its child's result, as Dagu writes it there.
  const called = await server.call('GET', `/dag-runs/chain-root/${run.dagRunId}/steps/to-mid/log`);
  assert.deepEqual(JSON.parse(called.body.content), { name: 'chain-mid', dagRunId: mid.dagRunId, params: 'MSG=Received FromRoot', outputs: {}, status: 'succeeded' });
  assert.match(called.body.content, /^\{\n {2}"name": "chain-mid",\n/);
});

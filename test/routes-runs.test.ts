// The HTTP API of the foundation (runs), driven over real HTTP against the real server, on both carriers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describeOnCarriers, HELLO, waitUntil } from './helpers.ts';

const SLEEPER = 'steps:\n  - name: sleep\n    command: sleep 30\n';

describeOnCarriers('API', (server, carrier) => {
  const call = (method: string, path: string, body?: unknown) => server.call(method, path, body);

  test('continueOn: allowed failures let later steps run (partially succeeded), markSuccess records success', async () => {
    const cases: Array<[string, string, string, string[]]> = [
      ['cont-exit', 'continueOn:\n      exitCode: [3]', 'partially_succeeded', ['failed', 'succeeded']],
      ['cont-output', 'continueOn:\n      output: ["re:^WARN"]', 'partially_succeeded', ['failed', 'succeeded']],
      ['cont-short', 'continueOn: failed', 'partially_succeeded', ['failed', 'succeeded']],
      ['cont-mark', 'continueOn:\n      failure: true\n      markSuccess: true', 'succeeded', ['succeeded', 'succeeded']],
      ['cont-none', 'continueOn:\n      exitCode: [4]', 'failed', ['failed', 'aborted']],
    ];
    for (const [name, continueOn, runStatus, nodeStatuses] of cases) {
      await server.writeDag(name, `steps:\n  - name: flaky\n    command: echo "WARN low disk"; exit 3\n    ${continueOn}\n  - name: after\n    command: echo after\n`);
      const run = await server.startAndWait(name);
      assert.deepEqual([run.statusLabel, run.nodes.map((node: { statusLabel: string }) => node.statusLabel)], [runStatus, nodeStatuses], name);
    }
    await server.writeDag('cont-last', 'steps:\n  - name: only\n    command: exit 1\n    continueOn: failed\n');
    assert.equal((await server.startAndWait('cont-last')).statusLabel, 'failed', 'an allowed failure with nothing after it fails the run');
  });

  test('preconditions: a step whose condition does not hold is skipped; a DAG-level one aborts the run before any step', async () => {
    await server.writeDag('conds', [
      'params:',
      '  - MODE: prod',
      'steps:',
      '  - name: runs',
      '    command: echo ran',
      '    preconditions:',
      '      - condition: "$MODE"',
      '        expected: "re:^pr"',
      '      - test -d /',
      '  - name: skipped',
      '    command: echo never',
      '    preconditions:',
      '      - condition: "`echo $MODE`"',
      '        expected: dev',
      '        error: only in dev',
      '    depends: []',
      '  - name: negated',
      '    command: echo negated ran',
      '    preconditions:',
      '      - command: test -f /definitely/missing',
      '        negate: true',
      '    depends: []',
      '  - name: downstream',
      '    command: echo never either',
      '    depends: [skipped]',
      '  - name: tolerant',
      '    command: echo tolerant ran',
      '    depends: [skipped]',
      '    preconditions: "true"',
      '',
    ].join('\n').replace('steps:', 'type: graph\nsteps:').replace("    depends: [skipped]\n    preconditions", "    depends: [negated]\n    preconditions"));
    const run = await server.startAndWait('conds');
    assert.deepEqual(run.nodes.map((node: { step: { name: string }; statusLabel: string }) => [node.step.name, node.statusLabel]), [
      ['runs', 'succeeded'], ['skipped', 'skipped'], ['negated', 'succeeded'], ['downstream', 'skipped'], ['tolerant', 'succeeded'],
    ]);
    assert.equal(run.nodes[1].error, 'only in dev');
    assert.equal(run.statusLabel, 'succeeded');

    await server.writeDag('dagcond', 'preconditions:\n  - condition: "`echo closed`"\n    expected: open\nsteps:\n  - echo never\n');
    const abortedRun = await server.startAndWait('dagcond');
    assert.deepEqual([abortedRun.statusLabel, abortedRun.nodes[0].statusLabel], ['aborted', 'not_started']);
    assert.equal(abortedRun.error, undefined, 'the run summary has no error field');
    const log = await call('GET', `/dag-runs/dagcond/${abortedRun.dagRunId}/log`);
    assert.match(log.body.content, /msg="Precondition not met" .*error="precondition not met: \\"`echo closed`\\" is \\"closed\\", expected \\"open\\""/);
  });

  test('start runs the steps as processes; status, nodes, params, timestamps and logs are visible', async () => {
    await server.writeDag('hello', HELLO);
    const t0 = Date.now();
    const started = await call('POST', '/dags/hello/start', { params: '{"NAME":"api"}', dagRunId: 'run1' });
    assert.deepEqual([started.status, started.body], [200, { dagRunId: 'run1' }]);
    const run = await server.waitForRun('hello', 'run1');
    assert.equal(run.status, 4);
    assert.equal(run.statusLabel, 'succeeded');
    assert.equal(run.params, '{"NAME":"api"}');
    assert.equal(run.rootDAGRunName, 'hello');
    assert.equal(run.rootDAGRunId, 'run1');
    assert.equal(run.parentDAGRunId, '');
    assert.equal(run.queuedAt, '');
    const startedAt = Date.parse(run.startedAt);
    const finishedAt = Date.parse(run.finishedAt);
    assert.ok(startedAt >= t0 - 1000 && finishedAt >= startedAt && finishedAt <= Date.now());
    assert.deepEqual(run.nodes.map((n: any) => [n.step.name, n.status, n.statusLabel, n.doneCount, n.retryCount, n.error]),
      [['s1', 4, 'succeeded', 1, 0, ''], ['s2', 4, 'succeeded', 1, 0, '']]);
    assert.ok(Date.parse(run.nodes[1].startedAt) >= Date.parse(run.nodes[0].finishedAt));
    assert.equal(await readFile(run.nodes[1].stdout, 'utf8'), 'second hello api\n');

    const stdout = await call('GET', '/dag-runs/hello/run1/steps/s2/log');
    assert.deepEqual(stdout.body, { content: 'second hello api', lineCount: 1, totalLines: 1, hasMore: false, isEstimate: false, nextOffset: 17 });
    const stderr = await call('GET', '/dag-runs/hello/run1/steps/s2/log?stream=stderr');
    assert.equal(stderr.body.content, 'oops');
    const runLog = await call('GET', '/dag-runs/hello/run1/log');
    assert.equal(runLog.status, 200);
    const lines = runLog.body.content.split('\n');
    assert.match(lines[0], /msg="DAG run started" dag=hello run-id=run1/);
    assert.match(lines[1], /msg="Step started" .* step=s1/);
    assert.match(lines[lines.length - 1], /msg="DAG run finished" .* status=succeeded/);
    assert.equal(runLog.body.totalLines, lines.length);
    assert.equal((await call('GET', '/dag-runs/hello/run1/steps/nope/log')).status, 404);
    assert.equal((await call('GET', '/dag-runs/hello/run1/steps/s1/log?stream=both')).status, 400);
    assert.equal((await call('GET', '/dag-runs/hello/nope/log')).status, 404);
  });

  test('params accept JSON object, JSON array and KEY=value text; defaults fill the rest', async () => {
    await server.writeDag('params', 'params:\n  - A: one\n  - B: two\nsteps:\n  - echo "$A-$B"\n');
    for (const [params, expected, stored] of [
      ['{"A":"x"}', 'x-two', { A: 'x', B: 'two' }],
      ['["B=arr"]', 'one-arr', { A: 'one', B: 'arr' }],
      ['A=raw B="with space"', 'raw-with space', { A: 'raw', B: 'with space' }],
      [undefined, 'one-two', { A: 'one', B: 'two' }],
    ] as const) {
      const run = await server.startAndWait('params', params === undefined ? {} : { params });
      assert.deepEqual(JSON.parse(run.params), stored);
      assert.equal(await server.stepLog('params', run.dagRunId, 'cmd_1'), expected);
    }
    const bad = await call('POST', '/dags/params/start', { params: '{"A":' });
    assert.deepEqual([bad.status, bad.body.code], [400, 'bad_request']);
  });

  test('start refuses duplicates, singleton and maxActiveRuns conflicts, bad ids and names', async () => {
    await server.writeDag('sleeper', SLEEPER);
    assert.equal((await call('POST', '/dags/sleeper/start', { dagRunId: 'sl1' })).status, 200);
    await server.waitForRun('sleeper', 'sl1', (run) => run.nodes[0].status === 1);
    const singleton = await call('POST', '/dags/sleeper/start', { dagRunId: 'sl2', singleton: true });
    assert.deepEqual([singleton.status, singleton.body.code], [409, 'already_running']);
    const limit = await call('POST', '/dags/sleeper/start', { dagRunId: 'sl3' });
    assert.deepEqual([limit.status, limit.body.code], [409, 'max_run_reached']);
    const duplicate = await call('POST', '/dags/hello/start', { dagRunId: 'run1' });
    assert.deepEqual([duplicate.status, duplicate.body.code], [409, 'already_exists']);
    assert.equal((await call('POST', '/dags/hello/start', { dagRunId: 'bad id!' })).status, 400);
    assert.equal((await call('POST', '/dags/hello/start', { dagRunId: '../../x' })).status, 400);
    const badName = await call('POST', '/dags/hello/start', { dagName: 'bad name!' });
    assert.deepEqual([badName.status, badName.body.code], [400, 'bad_request']);
    assert.equal((await call('POST', '/dags/nope/start', {})).status, 404);
    await server.writeDag('invalid', 'steps:\n  - name: a\n    command: x\n    depends: [b]\n');
    assert.equal((await call('POST', '/dags/invalid/start', {})).status, 400);
    const renamed = await call('POST', '/dags/hello/start', { dagName: 'renamed-hello', dagRunId: 'rn1' });
    assert.equal(renamed.status, 200);
    const run = await server.waitForRun('renamed-hello', 'rn1');
    assert.deepEqual([run.name, run.status], ['renamed-hello', 4]);
    const generated = await call('POST', '/dags/hello/start', {});
    assert.match(generated.body.dagRunId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await call('POST', '/dag-runs/sleeper/sl1/stop');
    await server.waitForRun('sleeper', 'sl1');
  });

  test('stop aborts a running run and its whole process group; stopping again is not_running', async () => {
    const marker = `troupe-test-grandchild-${carrier}-${process.pid}`;
    await server.writeDag('groupy', `steps:\n  - name: spawner\n    command: bash -c 'exec -a ${marker} sleep 60' & sleep 60\n`);
    await call('POST', '/dags/groupy/start', { dagRunId: 'g1' });
    await server.waitForRun('groupy', 'g1', (run) => run.nodes[0].status === 1);
    assert.ok(await waitUntil(() => processCount(marker) === 1));
    const stopped = await call('POST', '/dag-runs/groupy/g1/stop');
    assert.equal(stopped.status, 200);
    const run = await server.waitForRun('groupy', 'g1');
    assert.deepEqual([run.status, run.statusLabel], [3, 'aborted']);
    assert.deepEqual([run.nodes[0].statusLabel, run.nodes[0].error], ['aborted', 'signal: SIGTERM']);
    assert.ok(await waitUntil(() => processCount(marker) === 0));
    assert.equal(processCount(marker), 0);
    const again = await call('POST', '/dag-runs/groupy/g1/stop');
    assert.deepEqual([again.status, again.body.code], [400, 'not_running']);
    assert.equal((await call('POST', '/dag-runs/groupy/nope/stop')).status, 404);
  });

  test('a failing step fails the run and aborts what depends on it', async () => {
    await server.writeDag('failing', 'steps:\n  - name: ok\n    command: echo ok\n  - name: bad\n    command: exit 3\n  - name: after\n    command: echo after\n');
    await call('POST', '/dags/failing/start', { dagRunId: 'f1' });
    const run = await server.waitForRun('failing', 'f1');
    assert.deepEqual([run.status, run.statusLabel], [2, 'failed']);
    assert.deepEqual(run.nodes.map((n: any) => [n.statusLabel, n.error]), [
      ['succeeded', ''], ['failed', 'failed to execute step "bad": exit status 3'], ['aborted', 'upstream step "bad" did not succeed'],
    ]);
    assert.equal(run.nodes[2].startedAt, '');
  });

  /** Runs `count` independent `sleep 0.3` steps under `maxActiveSteps`; the finished run. */
  const fanOut = async (name: string, maxActiveSteps: number, count: number) => {
    await server.writeDag(name, `type: graph\nmaxActiveSteps: ${maxActiveSteps}\nsteps:\n` + Array.from({ length: count }, (_, i) => `  - name: p${i + 1}\n    command: sleep 0.3\n`).join(''));
    const { body } = await call('POST', `/dags/${name}/start`, {});
    const run = await server.waitForRun(name, body.dagRunId);
    assert.equal(run.status, 4);
    return run;
  };
  const allAtOnce = (run: any) => {
    const starts = run.nodes.map((n: any) => Date.parse(n.startedAt));
    const ends = run.nodes.map((n: any) => Date.parse(n.finishedAt));
    return Math.max(...starts) < Math.min(...ends);
  };

  test('independent steps run together up to maxActiveSteps', async () => {
    const t0 = Date.now();
    const run = await fanOut('fan', 3, 3);
    assert.ok(allAtOnce(run), 'all three ran at the same time');
    assert.ok(Date.now() - t0 > 250);
  });

  test('maxActiveSteps 0 sets no limit, as Dagu reads it; a negative one is refused', async () => {
    assert.ok(allAtOnce(await fanOut('fan-all', 0, 4)), 'all four ran at the same time');
    const refused = await call('POST', '/dags/validate', { spec: 'maxActiveSteps: -1\nsteps:\n  - "true"\n' });
    assert.equal(refused.body.valid, false);
    assert.match(JSON.stringify(refused.body.errors), /maxActiveSteps.*at least 0/);
  });

  test('run listings: per DAG with gridData, and /dag-runs with every filter', async () => {
    const history = await call('GET', '/dags/hello/dag-runs');
    assert.equal(history.status, 200);
    const ids = history.body.dagRuns.map((r: any) => r.dagRunId);
    assert.ok(ids.includes('run1'));
    assert.deepEqual(history.body.gridData.map((g: any) => g.name), ['s1', 's2']);
    assert.equal(history.body.gridData[0].history.length, ids.length);
    assert.equal(history.body.gridData[0].history[ids.indexOf('run1')], 4);
    const one = await call('GET', '/dags/hello/dag-runs/run1');
    assert.deepEqual([one.status, one.body.dagRun.dagRunId], [200, 'run1']);
    assert.equal((await call('GET', '/dags/hello/dag-runs/latest')).body.dagRun.dagRunId, ids[0]);

    const byName = await call('GET', '/dag-runs?name=hello');
    assert.deepEqual(byName.body.dagRuns.map((r: any) => r.dagRunId), ids);
    assert.equal(byName.body.dagRuns[0].nodes, undefined);
    const byStatus = await call('GET', '/dag-runs?status=2');
    assert.ok(byStatus.body.dagRuns.every((r: any) => r.status === 2));
    assert.ok(byStatus.body.dagRuns.some((r: any) => r.dagRunId === 'f1'));
    const byId = await call('GET', '/dag-runs?dagRunId=run1');
    assert.deepEqual(byId.body.dagRuns.map((r: any) => [r.name, r.dagRunId]), [['hello', 'run1']]);
    const now = Math.floor(Date.now() / 1000);
    assert.deepEqual((await call('GET', `/dag-runs?fromDate=${now + 3600}`)).body.dagRuns, []);
    assert.ok((await call('GET', `/dag-runs?fromDate=${now - 3600}&toDate=${now + 5}`)).body.dagRuns.length >= ids.length);
    assert.deepEqual((await call('GET', '/dag-runs?toDate=1')).body.dagRuns, []);
    assert.deepEqual((await call('GET', '/dag-runs?name=nothing')).body, { dagRuns: [] });
    assert.deepEqual((await call('GET', '/dag-runs/hello?status=4')).body.dagRuns.map((r: any) => r.dagRunId), ids.filter((id: string) => id !== undefined));
    for (const query of ['status=9', 'status=abc', 'fromDate=2024-01-01', 'toDate=x']) {
      const bad = await call('GET', `/dag-runs?${query}`);
      assert.deepEqual([bad.status, bad.body.code], [400, 'bad_request'], query);
    }
  });

  test('run details carry both keys; latest resolves; unknown runs are 404', async () => {
    const { body } = await call('GET', '/dag-runs/hello/run1');
    assert.deepEqual(body.dagRun, body.dagRunDetails);
    assert.equal(body.dagRun.nodes.length, 2);
    const latest = await call('GET', '/dag-runs/hello/latest');
    assert.equal(latest.body.dagRun.dagRunId, (await call('GET', '/dag-runs?name=hello')).body.dagRuns[0].dagRunId);
    const missing = await call('GET', '/dag-runs/hello/nope');
    assert.deepEqual([missing.status, missing.body], [404, { code: 'not_found', message: 'dag-run ID nope not found for DAG hello' }]);
    assert.deepEqual((await call('GET', '/dag-runs/nope/latest')).body, { code: 'not_found', message: 'no dag-runs found for DAG nope' });
  });

  test('log chunks: tail, head, offset and limit', async () => {
    await server.writeDag('manylines', 'steps:\n  - name: gen\n    command: seq 1 25\n');
    await call('POST', '/dags/manylines/start', { dagRunId: 'ml1' });
    await server.waitForRun('manylines', 'ml1');
    const log = (query: string) => call('GET', `/dag-runs/manylines/ml1/steps/gen/log?${query}`).then((r) => r.body);
    assert.deepEqual(await log('tail=3'), { content: '23\n24\n25', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false, nextOffset: 66 });
    assert.deepEqual(await log('head=3'), { content: '1\n2\n3', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false, nextOffset: 6 });
    assert.deepEqual(await log('offset=10&limit=3'), { content: '10\n11\n12', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false, nextOffset: 27 });
    assert.deepEqual(await log('offset=24'), { content: '24\n25', lineCount: 2, totalLines: 25, hasMore: false, isEstimate: false, nextOffset: 66 });
    assert.equal((await log('limit=20000')).lineCount, 25);
    assert.equal((await log('tail=0')).lineCount, 25);
    assert.equal((await log('tail=2&head=5')).content, '24\n25');
    assert.equal((await call('GET', '/dag-runs/manylines/ml1/steps/gen/log?tail=x')).status, 400);
    assert.equal((await call('GET', '/dag-runs/manylines/ml1/log?tail=1')).body.lineCount, 1);
  });

  test('POST /dag-runs runs an inline spec; every error has its code', async () => {
    const ok = await call('POST', '/dag-runs', { spec: 'steps:\n  - name: a\n    command: echo inline\n', name: 'inline1', dagRunId: 'in1' });
    assert.deepEqual([ok.status, ok.body], [200, { dagRunId: 'in1' }]);
    const run = await server.waitForRun('inline1', 'in1');
    assert.equal(run.status, 4);
    assert.equal((await call('GET', '/dag-runs/inline1/in1/steps/a/log')).body.content, 'inline');
    assert.equal((await call('GET', '/dag-runs/inline1/in1/spec')).body.spec, 'steps:\n  - name: a\n    command: echo inline\n');
    assert.equal((await call('GET', '/dags/inline1')).status, 404);
    const named = await call('POST', '/dag-runs', { spec: 'name: inline2\nsteps:\n  - echo x\n' });
    assert.equal(named.status, 200);
    for (const [body, message] of [
      [{ spec: 'steps:\n  - echo x\n' }, 'DAG name is required'],
      [{ name: 'x' }, 'spec is required'],
      [{ spec: 'steps: [[[', name: 'bad' }, /line 1/],
      [{ spec: 'steps:\n  - echo x\n', name: 'x'.repeat(41) }, /40 characters/],
    ] as const) {
      const refused = await call('POST', '/dag-runs', body);
      assert.deepEqual([refused.status, refused.body.code], [400, 'bad_request']);
      if (typeof message === 'string') assert.equal(refused.body.message, message);
      else assert.match(refused.body.message, message);
    }
    await call('POST', '/dag-runs', { spec: SLEEPER, name: 'inline-sleeper', dagRunId: 'is1' });
    await server.waitForRun('inline-sleeper', 'is1', (r) => r.nodes[0].status === 1);
    const singleton = await call('POST', '/dag-runs', { spec: SLEEPER, name: 'inline-sleeper', singleton: true });
    assert.deepEqual([singleton.status, singleton.body.code], [409, 'max_run_reached']);
    await call('POST', '/dag-runs/inline-sleeper/is1/stop');
    await server.waitForRun('inline-sleeper', 'is1');
  });

  test('stop-all stops every running run of a DAG', async () => {
    await server.writeDag('many', 'maxActiveRuns: 3\nsteps:\n  - sleep 30\n');
    for (const id of ['m1', 'm2', 'm3']) assert.equal((await call('POST', '/dags/many/start', { dagRunId: id })).status, 200);
    for (const id of ['m1', 'm2', 'm3']) await server.waitForRun('many', id, (run) => run.nodes[0].status === 1);
    const stopped = await call('POST', '/dags/many/stop-all');
    assert.deepEqual([stopped.status, stopped.body], [200, { errors: [] }]);
    for (const id of ['m1', 'm2', 'm3']) assert.equal((await call('GET', `/dag-runs/many/${id}`)).body.dagRun.status, 3);
    assert.equal((await call('POST', '/dags/nope/stop-all')).status, 404);
  });
});

function processCount(marker: string): number {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.startsWith(marker)).length;
}

// The HTTP API of the foundation (DAG definitions and their files), driven over real HTTP against the real server, on both carriers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeOnCarriers, HELLO, waitUntil } from './helpers.ts';

describeOnCarriers('API', (server) => {
  const call = (method: string, path: string, body?: unknown) => server.call(method, path, body);

  test('GET /health reports healthy with version, uptime and timestamp', async () => {
    const { status, body } = await call('GET', '/health');
    assert.equal(status, 200);
    assert.equal(body.status, 'healthy');
    assert.match(body.version, /^\d+\.\d+\.\d+/);
    assert.equal(Number.isInteger(body.uptime), true);
    assert.ok(Math.abs(Date.parse(body.timestamp) - Date.now()) < 60_000);
  });

  test('unknown routes and malformed bodies get error documents', async () => {
    assert.deepEqual((await call('GET', '/nothing-here')).body.code, 'not_found');
    const bad = await call('POST', '/dags', '{not json');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'bad_request');
    const big = await call('POST', '/dags', JSON.stringify({ name: 'big', spec: 'x'.repeat(1024 * 1024 + 10) }));
    assert.equal(big.status, 413);
    assert.equal(big.body.code, 'payload_too_large');
    const wrongType = await call('POST', '/dags', { name: 5 });
    assert.equal(wrongType.status, 400);
    assert.match(wrongType.body.message, /name/);
  });

  test('POST /dags creates with and without spec; names and specs are validated', async () => {
    const created = await call('POST', '/dags', { name: 'newdag' });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body, { name: 'newdag' });
    const spec = await call('GET', '/dags/newdag/spec');
    assert.equal(spec.status, 200);
    assert.match(spec.body.spec, /command: echo hello/);
    assert.deepEqual(spec.body.errors, []);
    assert.equal(spec.body.dag.name, 'newdag');

    const again = await call('POST', '/dags', { name: 'newdag' });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'already_exists');
    for (const name of ['bad name', 'x'.repeat(41), '../evil', '..', '']) {
      const bad = await call('POST', '/dags', { name });
      assert.equal(bad.status, 400, name);
      assert.equal(bad.body.code, 'bad_request');
    }
    const invalid = await call('POST', '/dags', { name: 'withspec', spec: 'steps:\n  - name: a\n    command: echo hi\n    depends: [zzz]\n' });
    assert.equal(invalid.status, 400);
    assert.deepEqual(invalid.body.details.errors, ['steps[0].depends (line 4): unknown step "zzz"']);
    assert.equal((await call('GET', '/dags/withspec')).status, 404);
    assert.equal((await call('POST', '/dags', { name: 'withspec2', spec: 'steps:\n  - echo hi\n' })).status, 201);
    assert.equal((await call('POST', '/dags', { name: 'x.y-z_1' })).status, 201);
  });

  test('GET /dags/{fileName} returns details; unknown and unsafe names are 404', async () => {
    await server.writeDag('hello', HELLO);
    const { status, body } = await call('GET', '/dags/hello');
    assert.equal(status, 200);
    assert.equal(body.dag.name, 'hello');
    assert.equal(body.dag.description, 'hello dag');
    assert.deepEqual(body.dag.tags, ['demo', 'X']);
    assert.deepEqual(body.dag.params, ['NAME=world']);
    assert.equal(body.dag.defaultParams, '{"NAME":"world"}');
    assert.equal(body.dag.maxActiveRuns, 1);
    assert.equal(body.dag.maxActiveSteps, 1);
    assert.equal(body.dag.histRetentionDays, 30);
    assert.deepEqual(body.dag.steps.map((s: any) => [s.name, s.depends ?? []]), [['s1', []], ['s2', ['s1']]]);
    assert.deepEqual(body.dag.steps[0].commands, [{ command: 'echo', args: ['hello', '${NAME}'] }]);
    assert.deepEqual(body.localDags, []);
    assert.equal(body.suspended, false);
    assert.deepEqual(body.errors, []);
    assert.equal(body.latestDAGRun.status, 0);
    for (const path of ['/dags/nonexist', '/dags/bad.name', '/dags/..%2F..%2Fetc%2Fpasswd', '/dags/%2E%2E']) {
      const missing = await call('GET', path);
      assert.equal(missing.status, 404, path);
      assert.equal(missing.body.code, 'not_found');
    }
  });

  test('GET /dags paginates, filters by name and tag, sorts and reports broken files', async () => {
    await server.writeDag('alpha', 'tags: [one]\nsteps:\n  - echo a\n');
    await server.writeDag('Beta', 'tags: [two, One]\nsteps:\n  - echo b\n');
    await server.writeDag('broken', 'steps: [[[\n');
    const all = await call('GET', '/dags?perPage=1000');
    assert.equal(all.status, 200);
    const names = all.body.dags.map((d: any) => d.fileName);
    assert.deepEqual(names, [...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())));
    assert.ok(names.includes('broken'));
    assert.ok(all.body.errors.some((e: string) => /^broken: line \d+: /.test(e)));
    assert.deepEqual(all.body.dags.find((d: any) => d.fileName === 'broken').dag.name, 'broken');

    const desc = await call('GET', '/dags?perPage=1000&order=desc&sort=name');
    assert.deepEqual(desc.body.dags.map((d: any) => d.fileName), [...names].reverse());
    const byTag = await call('GET', '/dags?tag=ONE');
    assert.deepEqual(byTag.body.dags.map((d: any) => d.fileName), ['alpha', 'Beta']);
    const byName = await call('GET', '/dags?name=ALP');
    assert.deepEqual(byName.body.dags.map((d: any) => d.fileName), ['alpha']);

    const total = all.body.pagination.totalRecords;
    const first = await call('GET', '/dags?perPage=1&page=1');
    assert.deepEqual(first.body.pagination, { totalRecords: total, currentPage: 1, totalPages: total, nextPage: 2, prevPage: null });
    const last = await call('GET', `/dags?perPage=1&page=${total}`);
    assert.equal(last.body.pagination.nextPage, null);
    assert.equal(last.body.pagination.prevPage, total - 1);
    const beyond = await call('GET', `/dags?perPage=1&page=${total + 5}`);
    assert.deepEqual(beyond.body.dags, []);
    for (const query of ['perPage=0', 'perPage=1001', 'page=0', 'page=x', 'order=up', 'sort=size']) {
      const bad = await call('GET', `/dags?${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.code, 'bad_request');
    }
  });

  test('PUT spec answers problems with 200 and leaves the file; DELETE removes it', async () => {
    await call('POST', '/dags', { name: 'edit-me' });
    const before = (await call('GET', '/dags/edit-me/spec')).body.spec;
    const invalid = await call('PUT', '/dags/edit-me/spec', { spec: 'steps:\n  - name: a\n    command: echo\n    depends: zzz\n' });
    assert.equal(invalid.status, 200);
    assert.deepEqual(invalid.body.errors, ['steps[0].depends (line 4): unknown step "zzz"']);
    assert.equal((await call('GET', '/dags/edit-me/spec')).body.spec, before);
    const valid = await call('PUT', '/dags/edit-me/spec', { spec: 'steps:\n  - echo edited\n' });
    assert.equal(valid.status, 200);
    assert.deepEqual(valid.body.errors, []);
    assert.equal((await call('GET', '/dags/edit-me/spec')).body.spec, 'steps:\n  - echo edited\n');
    assert.equal((await call('PUT', '/dags/nope/spec', { spec: 'steps: [echo]\n' })).status, 404);
    assert.equal((await call('PUT', '/dags/edit-me/spec', {})).status, 400);

    const deleted = await call('DELETE', '/dags/edit-me');
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assert.equal((await call('DELETE', '/dags/edit-me')).status, 404);
    assert.equal((await call('DELETE', '/dags/bad%20name')).status, 404);
  });

  test('POST /dags/validate always answers 200 with valid, errors and the dag', async () => {
    const invalid = await call('POST', '/dags/validate', { spec: 'steps:\n  - name: a\n    command: echo hi\n    depends: [zzz]\n' });
    assert.equal(invalid.status, 200);
    assert.equal(invalid.body.valid, false);
    assert.deepEqual(invalid.body.errors, ['steps[0].depends (line 4): unknown step "zzz"']);
    assert.equal(invalid.body.dag.steps[0].name, 'a');
    const valid = await call('POST', '/dags/validate', { spec: 'steps:\n  - name: a\n    command: echo hi\n', name: 'vname' });
    assert.deepEqual([valid.body.valid, valid.body.errors, valid.body.dag.name], [true, [], 'vname']);
    const broken = await call('POST', '/dags/validate', { spec: 'steps: [[[' });
    assert.equal(broken.status, 200);
    assert.equal(broken.body.valid, false);
    assert.match(broken.body.errors[0], /^line 1: /);
    assert.equal(broken.body.dag, undefined);
    const missing = await call('POST', '/dags/validate', {});
    assert.deepEqual([missing.status, missing.body.valid], [200, false]);
  });

  test('conditions and repeat policies show in the DAG details and run', async () => {
    const spec = [
      'preconditions:',
      '  - condition: "`date +%u`"',
      '    expected: "re:[1-7]"',
      '    error: never',
      'steps:',
      '  - name: poll',
      '    command: "true"',
      '    preconditions: test -d /',
      '    retryPolicy: {limit: 2, backoff: true}',
      '    repeatPolicy: {repeat: until, exitCode: [0], limit: 3, intervalSec: 1}',
      '',
    ].join('\n');
    const validated = await call('POST', '/dags/validate', { spec, name: 'policies' });
    assert.deepEqual([validated.body.valid, validated.body.errors], [true, []]);
    assert.deepEqual(validated.body.dag.preconditions, [{ condition: '`date +%u`', expected: 're:[1-7]', error: 'never' }]);
    assert.deepEqual(validated.body.dag.steps[0].preconditions, [{ condition: 'test -d /' }]);
    assert.deepEqual(validated.body.dag.steps[0].repeatPolicy, { repeat: 'until', interval: 1, limit: 3, exitCode: [0] });
    assert.equal((await call('POST', '/dags', { name: 'policies', spec })).status, 201);
    const started = await call('POST', '/dags/policies/start', {});
    const run = await server.waitForRun('policies', started.body.dagRunId);
    assert.deepEqual([run.statusLabel, run.nodes[0].doneCount, run.nodes[0].retryCount], ['succeeded', 1, 0], 'until exit code 0: one execution');
  });

  test('validation accepts calls of DAGs that do not exist yet; details show handlers, local DAGs and the step fields', async () => {
    assert.equal((await call('POST', '/dags', { name: 'callee', spec: 'steps:\n  - echo callee\n' })).status, 201);
    const spec = [
      'handlerOn:',
      '  failure: echo failed',
      '  cancel:',
      '    command: echo aborted',
      'steps:',
      '  - name: fan',
      '    call: callee',
      '    params: {A: 1}',
      '    parallel: {items: [x, y], maxConcurrent: 1}',
      '  - name: local',
      '    run: helper',
      '    params: "B=2"',
      '  - name: logged',
      '    command: echo hi',
      '    stdout: out.log',
      '    mailOnError: true',
      '    timeoutSec: 9',
      '  - name: broken',
      '    call: nobody',
      '---',
      'name: helper',
      'steps:',
      '  - echo helping',
      '',
    ].join('\n');
    const validated = await call('POST', '/dags/validate', { spec, name: 'caller' });
    assert.deepEqual([validated.body.valid, validated.body.errors], [true, []]);
    const fixed = spec.replace('call: nobody', 'call: helper');
    const put = await call('POST', '/dags', { name: 'caller', spec: fixed });
    assert.equal(put.status, 201);
    const { body } = await call('GET', '/dags/caller');
    assert.deepEqual(Object.keys(body.dag.handlerOn), ['failure', 'cancel']);
    assert.deepEqual([body.dag.handlerOn.cancel.name, body.dag.handlerOn.cancel.command], ['onCancel', 'echo']);
    const [fan, local, logged] = body.dag.steps;
    assert.deepEqual([fan.run, fan.call, fan.params, fan.parallel], ['callee', 'callee', '{"A":"1"}', { items: ['x', 'y'], maxConcurrent: 1 }]);
    assert.deepEqual([local.run, local.params], ['helper', 'B=2']);
    assert.deepEqual([logged.stdout.endsWith('/out.log'), logged.mailOnError, logged.timeoutSec], [true, true, 9]);
    assert.deepEqual(body.localDags.map((l: { name: string; errors: string[] }) => [l.name, l.errors]), [['helper', []]]);
  });

  test('references reach the step: slices, fallbacks, JSON fields of outputs, step results by id', async () => {
    await server.writeDag('refs', [
      'params:',
      '  - NAME: troupe',
      '  - SHORT: ${NAME:0:3}',
      'steps:',
      '  - id: make',
      '    command: |-',
      '      echo \'{"db": {"host": "h1", "ports": [5432, 5433]}}\'',
      '    output: CONFIG',
      '  - name: show',
      '    command: echo "${CONFIG.db.host}:${CONFIG.db.ports.1} ${make.exitCode} $SHORT ${MISSING:-fallback} ${make.stdout}"',
      '',
    ].join('\n'));
    const run = await server.startAndWait('refs');
    assert.equal(run.statusLabel, 'succeeded');
    const log = await server.stepLog('refs', run.dagRunId, 'show');
    assert.equal(log, `h1:5433 0 tro fallback ${run.nodes[0].stdout}`);
  });

  test('dotenv files and secrets reach the step; secret values are masked in logs and outputs; a missing secret refuses the run', async () => {
    process.env.TROUPE_TEST_API_TOKEN = 'tok-123456';
    await writeFile(join(server.home, 'dags', 'app.env'), 'FROM_FILE=dotenv-value\nPATH=/should/not/win\n');
    await mkdir(join(server.home, 'dags', 'secrets'), { recursive: true });
    await writeFile(join(server.home, 'dags', 'secrets', 'db'), 'db-pass-987\n');
    await server.writeDag('secretive', [
      'dotenv: app.env',
      'secrets:',
      '  - name: API_TOKEN',
      '    provider: env',
      '    key: TROUPE_TEST_API_TOKEN',
      '  - name: DB_PASS',
      '    provider: file',
      '    key: secrets/db',
      'steps:',
      '  - name: use',
      '    command: echo "$FROM_FILE token=$API_TOKEN pass=${DB_PASS} path-ok=$(command -v sh >/dev/null && echo yes)"',
      '    output: SEEN',
      '',
    ].join('\n'));
    const run = await server.startAndWait('secretive');
    assert.equal(run.statusLabel, 'succeeded');
    const log = await server.stepLog('secretive', run.dagRunId, 'use');
    assert.equal(log, 'dotenv-value token=******* pass=******* path-ok=yes');
    const stored = await readFile(run.nodes[0].stdout, 'utf8');
    assert.equal(stored.includes('tok-123456') || stored.includes('db-pass-987'), false, 'the log file holds no secret');

    await server.writeDag('nosecret', 'secrets:\n  - {name: X, provider: env, key: TROUPE_TEST_NOT_SET}\nsteps:\n  - echo x\n');
    const refused = await call('POST', '/dags/nosecret/start', {});
    assert.deepEqual([refused.status, refused.body.code, refused.body.message], [400, 'bad_request', 'secret X: environment variable TROUPE_TEST_NOT_SET is not set']);
    await server.writeDag('nodotenv', 'dotenv: [missing.env]\nsteps:\n  - echo x\n');
    const noDotenv = await call('POST', '/dags/nodotenv/start', {});
    assert.equal(noDotenv.status, 400);
    assert.match(noDotenv.body.message, /^dotenv file missing.env not found/);
  });

  test('backtick commands in env values and param defaults run once at start, a step\'s own when it starts; request params are never run', async () => {
    await server.writeDag('ticks', [
      'params:',
      '  - STAMP: "`echo p-$DAG_NAME`"',
      '  - GIVEN: plain',
      'env:',
      '  - FIRST: "`printf one`"',
      '  - SECOND: "${FIRST}-`echo two`"',
      'steps:',
      '  - name: show',
      '    command: echo "$STAMP $FIRST $SECOND"',
      '  - name: given',
      '    command: printenv GIVEN',
      '',
    ].join('\n'));
    const run = await server.startAndWait('ticks', { params: 'GIVEN="`echo injected`"' });
    assert.equal(run.statusLabel, 'succeeded');
    const log = await server.stepLog('ticks', run.dagRunId, 'show');
    assert.equal(log, 'p-ticks one one-two');
    const given = await server.stepLog('ticks', run.dagRunId, 'given');
    assert.equal(given, '`echo injected`', 'a request param reaches the step as it was sent');
    await server.writeDag('steptick', [
      'env:',
      '  - BASE: base',
      'steps:',
      '  - name: first',
      '    command: echo one',
      '    output: ONE',
      '  - name: second',
      '    env:',
      '      - MINE: "`echo $BASE-$ONE`"',
      '      - THEN: "${MINE}!"',
      '    command: echo "$MINE $THEN"',
      '  - name: broken',
      '    env:',
      '      - BAD: "`exit 4`"',
      '    command: echo never',
      '',
    ].join('\n'));
    const { body: stepRun } = await call('POST', '/dags/steptick/start', {});
    const finished = await server.waitForRun('steptick', stepRun.dagRunId);
    assert.deepEqual(finished.nodes.map((node: { statusLabel: string }) => node.statusLabel), ['succeeded', 'succeeded', 'failed']);
    assert.equal((await call('GET', `/dag-runs/steptick/${stepRun.dagRunId}/steps/second/log`)).body.content, 'base-one base-one!');
    assert.equal(finished.nodes[2].error, 'failed to execute step "broken": env BAD: command `exit 4` failed: exit status 4');
    await server.writeDag('badtick', 'env:\n  - X: "`exit 3`"\nsteps:\n  - echo x\n');
    const refused = await call('POST', '/dags/badtick/start', {});
    assert.deepEqual([refused.status, refused.body.message], [400, 'env X: command `exit 3` failed: exit status 3']);
  });

  test('what a step sees: exactly the allowed environment, built-ins, params, dotenv order, its directory and arguments', async () => {
    process.env.NOT_FOR_STEPS = 'hidden';
    await mkdir(join(server.home, 'dags', 'work', 'sub'), { recursive: true });
    await writeFile(join(server.home, 'dags', 'work', 'one.env'), 'SHARED=from-one\nONLY_ONE=1\n');
    await writeFile(join(server.home, 'dags', 'work', 'two.env'), 'SHARED=from-two\n');
    await server.writeDag('sees', [
      'workingDir: work',
      'dotenv: [one.env, two.env]',
      'params: "first second NAMED=value"',
      'env:',
      '  - DAG_LEVEL: dag',
      'steps:',
      '  - name: look',
      '    dir: sub',
      '    env:',
      '      - STEP_LEVEL: step',
      '    command: printf "%s|" "$(pwd)" "$1" "$2" "$NAMED" "$DAG_NAME" "$DAG_RUN_STEP_NAME" "$SHARED" "$ONLY_ONE"; env | cut -d= -f1 | sort | tr "\\n" " "',
      '',
    ].join('\n'));
    const run = await server.startAndWait('sees', { params: 'NAMED=override' });
    assert.equal(run.statusLabel, 'succeeded');
    const log = await server.stepLog('sees', run.dagRunId, 'look');
    const [shown, names] = [log.slice(0, log.lastIndexOf('|') + 1), log.slice(log.lastIndexOf('|') + 1).trim().split(' ')];
    assert.equal(shown, `${join(server.home, 'dags', 'work', 'sub')}|first|second|override|sees|look|from-two|1|`);
    const expected = ['DAG_LEVEL', 'DAG_NAME', 'DAG_RUN_ID', 'DAG_RUN_LOG_FILE', 'DAG_RUN_STEP_NAME', 'DAG_RUN_STEP_STDERR_FILE',
      'DAG_RUN_STEP_STDOUT_FILE', 'NAMED', 'ONLY_ONE', 'SHARED', 'STEP_LEVEL', 'PATH', 'HOME'];
    for (const name of expected) assert.ok(names.includes(name), `${name} is visible`);
    assert.equal(names.includes('NOT_FOR_STEPS'), false, 'the server environment does not leak');
    const allowed = new Set([...expected, 'PATH', 'HOME', 'LANG', 'TZ', 'SHELL', 'PWD', 'SHLVL', '_', 'OLDPWD']);
    assert.deepEqual(names.filter((name) => !allowed.has(name) && !/^(TROUPE_|LC_|DAG_)/.test(name)), []);
  });

  test('a DAG with its own logDir keeps its logs there, resolved against its working directory', async () => {
    await server.writeDag('ownlogs', 'logDir: custom-logs\nsteps:\n  - name: say\n    command: echo kept\n');
    const run = await server.startAndWait('ownlogs');
    const dir = join(server.home, 'dags', 'custom-logs', 'ownlogs');
    assert.equal(run.log.startsWith(`${dir}/`), true);
    assert.equal(run.nodes[0].stdout.startsWith(`${dir}/`), true);
    assert.equal(await readFile(run.nodes[0].stdout, 'utf8'), 'kept\n');
    // The run's end is readable once its record is stored; its log's last lines are written as the log closes, a moment later.
    const ended = await waitUntil(async () => /DAG run finished/.test(await readFile(run.log, 'utf8').catch(() => '')), 5_000);
    assert.ok(ended, await readFile(run.log, 'utf8').catch(() => 'no run log'));
    assert.equal((await call('GET', '/dags/ownlogs')).body.dag.logDir, join(server.home, 'dags', 'custom-logs'));
  });

  test('rename moves the file, refuses bad or taken names, and keeps run history under the old name', async () => {
    await server.writeDag('torename', 'steps:\n  - echo renamed\n');
    await server.startAndWait('torename', { dagRunId: 'before-rename' });
    const renamed = await call('POST', '/dags/torename/rename', { newFileName: 'renamed' });
    assert.equal(renamed.status, 200);
    assert.equal((await call('GET', '/dags/torename')).status, 404);
    assert.equal((await call('GET', '/dags/renamed')).status, 200);
    assert.equal((await call('GET', '/dag-runs/torename/before-rename')).body.dagRun.status, 4);
    assert.equal((await call('POST', '/dags/renamed/rename', { newFileName: 'hello' })).body.code, 'already_exists');
    assert.equal((await call('POST', '/dags/renamed/rename', { newFileName: 'bad name' })).status, 400);
    assert.equal((await call('POST', '/dags/nope/rename', { newFileName: 'zzz' })).status, 404);
  });

  test('suspend and resume a DAG', async () => {
    await server.writeDag('pausable', 'steps:\n  - echo p\n');
    assert.equal((await call('POST', '/dags/pausable/suspend', { suspend: true })).status, 200);
    assert.equal((await call('GET', '/dags?name=pausable')).body.dags[0].suspended, true);
    assert.equal((await call('GET', '/dags/pausable')).body.suspended, true);
    assert.equal((await call('POST', '/dags/pausable/suspend', { suspend: false })).status, 200);
    assert.equal((await call('GET', '/dags/pausable')).body.suspended, false);
    assert.equal((await call('POST', '/dags/nope/suspend', { suspend: true })).status, 404);
    assert.equal((await call('POST', '/dags/pausable/suspend', { suspend: 'yes' })).status, 400);
  });

  test('search finds lines with their numbers; tags are unique', async () => {
    await server.writeDag('searchable', 'description: needle here\nsteps:\n  - name: a\n    command: echo NEEDLE\n');
    const found = await call('GET', '/dags/search?q=needle');
    assert.equal(found.status, 200);
    const result = found.body.results.find((r: any) => r.name === 'searchable');
    assert.deepEqual(result.matches, [
      { line: 'description: needle here', lineNumber: 1, startLine: 1 },
      { line: '    command: echo NEEDLE', lineNumber: 4, startLine: 4 },
    ]);
    assert.equal(result.dag.name, 'searchable');
    const missing = await call('GET', '/dags/search');
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'bad_request');
    const tags = await call('GET', '/dags/tags');
    assert.equal(tags.status, 200);
    assert.deepEqual(tags.body.tags, [...new Set(tags.body.tags)]);
    assert.ok(tags.body.tags.includes('demo') && tags.body.tags.includes('X'));
  });

});

// The HTTP API of the foundation, driven over real HTTP against the real server, on both carriers.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';

const HELLO = 'description: hello dag\ntags: [demo, X]\nparams:\n  - NAME: world\nsteps:\n  - name: s1\n    command: echo hello ${NAME}\n    output: GREETING\n  - name: s2\n    command: echo "second $GREETING"; echo oops >&2\n';
const SLEEPER = 'steps:\n  - name: sleep\n    command: sleep 30\n';

for (const carrier of ['uws', 'node'] as const) {
  describe(`API on ${carrier}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(carrier);
      assert.equal(server.troupe.server.carrier, carrier);
    });
    after(() => server.close());
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

    test('validation knows the DAG files a call names; details show handlers, local DAGs and the step fields', async () => {
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
      assert.deepEqual(validated.body.errors, ['steps[3].call (line 19): unknown DAG "nobody": not a local DAG of this file nor a DAG file']);
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
        'env:',
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
      const { body: started } = await call('POST', '/dags/refs/start', {});
      const run = await server.waitForRun('refs', started.dagRunId);
      assert.equal(run.statusLabel, 'succeeded');
      const log = await call('GET', `/dag-runs/refs/${started.dagRunId}/steps/show/log`);
      assert.equal(log.body.content, `h1:5433 0 tro fallback ${run.nodes[0].stdout}`);
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
      const { body: started } = await call('POST', '/dags/secretive/start', {});
      const run = await server.waitForRun('secretive', started.dagRunId);
      assert.equal(run.statusLabel, 'succeeded');
      const log = await call('GET', `/dag-runs/secretive/${started.dagRunId}/steps/use/log`);
      assert.equal(log.body.content, 'dotenv-value token=******* pass=******* path-ok=yes');
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
      const { body: started } = await call('POST', '/dags/ticks/start', { params: 'GIVEN="`echo injected`"' });
      const run = await server.waitForRun('ticks', started.dagRunId);
      assert.equal(run.statusLabel, 'succeeded');
      const log = await call('GET', `/dag-runs/ticks/${started.dagRunId}/steps/show/log`);
      assert.equal(log.body.content, 'p-ticks one one-two');
      const given = await call('GET', `/dag-runs/ticks/${started.dagRunId}/steps/given/log`);
      assert.equal(given.body.content, '`echo injected`', 'a request param reaches the step as it was sent');
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
      assert.equal(finished.nodes[2].error, 'env BAD: command `exit 4` failed: exit status 4');
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
      const { body: started } = await call('POST', '/dags/sees/start', { params: 'NAMED=override' });
      const run = await server.waitForRun('sees', started.dagRunId);
      assert.equal(run.statusLabel, 'succeeded');
      const log = (await call('GET', `/dag-runs/sees/${started.dagRunId}/steps/look/log`)).body.content as string;
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
      const { body: started } = await call('POST', '/dags/ownlogs/start', {});
      const run = await server.waitForRun('ownlogs', started.dagRunId);
      const dir = join(server.home, 'dags', 'custom-logs', 'ownlogs');
      assert.equal(run.log.startsWith(`${dir}/`), true);
      assert.equal(run.nodes[0].stdout.startsWith(`${dir}/`), true);
      assert.equal(await readFile(run.nodes[0].stdout, 'utf8'), 'kept\n');
      assert.match(await readFile(run.log, 'utf8'), /DAG run finished/);
      assert.equal((await call('GET', '/dags/ownlogs')).body.dag.logDir, join(server.home, 'dags', 'custom-logs'));
    });

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
        const { body } = await call('POST', `/dags/${name}/start`, {});
        const run = await server.waitForRun(name, body.dagRunId);
        assert.deepEqual([run.statusLabel, run.nodes.map((node: { statusLabel: string }) => node.statusLabel)], [runStatus, nodeStatuses], name);
      }
      await server.writeDag('cont-last', 'steps:\n  - name: only\n    command: exit 1\n    continueOn: failed\n');
      const { body } = await call('POST', '/dags/cont-last/start', {});
      assert.equal((await server.waitForRun('cont-last', body.dagRunId)).statusLabel, 'failed', 'an allowed failure with nothing after it fails the run');
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
      const { body } = await call('POST', '/dags/conds/start', {});
      const run = await server.waitForRun('conds', body.dagRunId);
      assert.deepEqual(run.nodes.map((node: { step: { name: string }; statusLabel: string }) => [node.step.name, node.statusLabel]), [
        ['runs', 'succeeded'], ['skipped', 'skipped'], ['negated', 'succeeded'], ['downstream', 'skipped'], ['tolerant', 'succeeded'],
      ]);
      assert.equal(run.nodes[1].error, 'only in dev');
      assert.equal(run.statusLabel, 'succeeded');

      await server.writeDag('dagcond', 'preconditions:\n  - condition: "`echo closed`"\n    expected: open\nsteps:\n  - echo never\n');
      const { body: aborted } = await call('POST', '/dags/dagcond/start', {});
      const abortedRun = await server.waitForRun('dagcond', aborted.dagRunId);
      assert.deepEqual([abortedRun.statusLabel, abortedRun.nodes[0].statusLabel], ['aborted', 'not_started']);
      assert.equal(abortedRun.error, undefined, 'the run summary has no error field');
      const log = await call('GET', `/dag-runs/dagcond/${aborted.dagRunId}/log`);
      assert.match(log.body.content, /msg="Precondition not met" .*error="precondition not met: \\"`echo closed`\\" is \\"closed\\", expected \\"open\\""/);
    });

    test('rename moves the file, refuses bad or taken names, and keeps run history under the old name', async () => {
      await server.writeDag('torename', 'steps:\n  - echo renamed\n');
      const { body: started } = await call('POST', '/dags/torename/start', { dagRunId: 'before-rename' });
      await server.waitForRun('torename', started.dagRunId);
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
      assert.deepEqual(stdout.body, { content: 'second hello api', lineCount: 1, totalLines: 1, hasMore: false, isEstimate: false });
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
        const { body } = await call('POST', '/dags/params/start', params === undefined ? {} : { params });
        const run = await server.waitForRun('params', body.dagRunId);
        assert.deepEqual(JSON.parse(run.params), stored);
        assert.equal((await call('GET', `/dag-runs/params/${body.dagRunId}/steps/cmd_1/log`)).body.content, expected);
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
        ['succeeded', ''], ['failed', 'exit status 3'], ['aborted', 'upstream step "bad" did not succeed'],
      ]);
      assert.equal(run.nodes[2].startedAt, '');
    });

    test('independent steps run together up to maxActiveSteps', async () => {
      await server.writeDag('fan', 'type: graph\nmaxActiveSteps: 3\nsteps:\n' + [1, 2, 3].map((i) => `  - name: p${i}\n    command: sleep 0.3\n`).join(''));
      const t0 = Date.now();
      const { body } = await call('POST', '/dags/fan/start', {});
      const run = await server.waitForRun('fan', body.dagRunId);
      assert.equal(run.status, 4);
      const starts = run.nodes.map((n: any) => Date.parse(n.startedAt));
      const ends = run.nodes.map((n: any) => Date.parse(n.finishedAt));
      assert.ok(Math.max(...starts) < Math.min(...ends), 'all three ran at the same time');
      assert.ok(Date.now() - t0 > 250);
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
      assert.deepEqual(await log('tail=3'), { content: '23\n24\n25', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false });
      assert.deepEqual(await log('head=3'), { content: '1\n2\n3', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false });
      assert.deepEqual(await log('offset=10&limit=3'), { content: '10\n11\n12', lineCount: 3, totalLines: 25, hasMore: true, isEstimate: false });
      assert.deepEqual(await log('offset=24'), { content: '24\n25', lineCount: 2, totalLines: 25, hasMore: false, isEstimate: false });
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
}

function processCount(marker: string): number {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.startsWith(marker)).length;
}

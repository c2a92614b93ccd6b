// A run's params are data: whoever starts a run chooses their names and values, the DAG's author
// its code. A name that steers a shell, the loader or an interpreter (BASH_ENV, PATH, LD_PRELOAD,
// BASH_FUNC_f%%...) or is not a variable name is refused, from a request as from a sub DAG call or
// the definition's defaults; a value reaches a POSIX shell's code as a variable, so that no
// character of it runs as shell syntax, whatever quoting the command wrote around the reference.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedServer } from './helpers.ts';

describe('param names and values on the real server', () => {
  const server = sharedServer();
  let markers: string;
  before(async () => {
    markers = await mkdtemp(join(tmpdir(), 'troupe-param-safety-'));
  });
  after(() => rm(markers, { recursive: true, force: true }));

  /** What the attack would have created: nothing, if no character of a value ran. */
  const created = () => readdir(markers);

  test('reserved and non-variable param names are refused with 400 on every route that takes params, and nothing runs', async () => {
    const spec = `steps:\n  - name: touch\n    command: touch ${markers}/ran\n`;
    await server.writeDag('names-refused', spec);
    const forms: Array<[string, string[]]> = [
      [JSON.stringify({ BASH_ENV: '/tmp/x', PATH: '/nowhere', LD_PRELOAD: '/tmp/x.so', OK: '1' }), ['BASH_ENV', 'PATH', 'LD_PRELOAD']],
      [JSON.stringify({ 'BASH_FUNC_date%%': '() { touch /tmp/x; }' }), ['BASH_FUNC_date%%']],
      [JSON.stringify({ TROUPE_X: '1', DAG_RUN_ID: 'forged', NODE_OPTIONS: '--require /tmp/x.js', PYTHONSTARTUP: '/tmp/x.py' }), ['TROUPE_X', 'DAG_RUN_ID', 'NODE_OPTIONS', 'PYTHONSTARTUP']],
      [JSON.stringify({ '1abc': 'x', 'a-b': 'y', '': 'z' }), ['1abc', 'a-b']],
      ['BASH_ENV=/tmp/x "BASH_FUNC_date%%=() { touch /tmp/x; }" a-b=1 keep', ['BASH_ENV', 'BASH_FUNC_date%%', 'a-b']],
      [JSON.stringify(['IFS=x', 'SHELLOPTS=xtrace', 'positional']), ['IFS', 'SHELLOPTS']],
    ];
    const routes: Array<[string, (params: string) => object]> = [
      ['/dags/names-refused/start', (params) => ({ params })],
      ['/dags/names-refused/enqueue', (params) => ({ params })],
      ['/dag-runs', (params) => ({ params, name: 'names-inline', spec })],
      ['/dag-runs/enqueue', (params) => ({ params, name: 'names-inline', spec })],
    ];
    for (const [path, body] of routes) {
      for (const [params, names] of forms) {
        const answer = await server.call('POST', path, body(params));
        assert.equal(answer.status, 400, `${path} ${params}: ${answer.text}`);
        assert.equal(answer.body.code, 'bad_request');
        for (const name of names) assert.ok(answer.body.message.includes(JSON.stringify(name)), `${path}: ${answer.body.message} names ${name}`);
      }
    }
    // Positional values, and values that only look like assignments, are still taken.
    const fine = await server.call('POST', '/dags/names-refused/start', { params: '--flag=x https://h/?a=b 1=one NAME=ok' });
    assert.equal(fine.status, 200, fine.text);
    await server.waitForRun('names-refused', fine.body.dagRunId);
    assert.deepEqual(await created(), ['ran'], 'only the accepted start ran its step');
    await rm(join(markers, 'ran'));
    for (const name of ['names-refused', 'names-inline']) {
      const runs = (await server.call('GET', `/dag-runs/${name}`)).body.dagRuns;
      assert.equal(runs.length, name === 'names-refused' ? 1 : 0, `${name}: a refused request records no run`);
    }
  });

  test('a definition whose param defaults have a reserved name is invalid', async () => {
    const answer = await server.call('POST', '/dags/validate', { spec: 'params:\n  - PATH: /tmp/bin\n  - LD_PRELOAD: x\n  - NAME: ok\nsteps:\n  - echo hi\n' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.valid, false);
    assert.ok(answer.body.errors.some((error: string) => /params\.PATH.*reserved/.test(error)), answer.text);
    assert.ok(answer.body.errors.some((error: string) => /params\.LD_PRELOAD.*reserved/.test(error)), answer.text);
    assert.ok(!answer.body.errors.some((error: string) => error.includes('NAME')), answer.text);
    const started = await server.call('POST', '/dag-runs', { name: 'defaults-refused', spec: `params: BASH_ENV=/tmp/x\nsteps:\n  - touch ${markers}/defaults\n` });
    assert.equal(started.status, 400, started.text);
    assert.deepEqual(await created(), []);
  });

  test('a sub DAG call passing a reserved name fails its step saying why, and the child runs nothing', async () => {
    await server.writeDag('names-parent', [
      'steps:',
      '  - name: call',
      '    call: names-child',
      '    params: "PATH=/nowhere MSG=hi"',
      '---',
      'name: names-child',
      'params:',
      '  - MSG: default',
      'steps:',
      `  - touch ${markers}/child`,
    ].join('\n'));
    const run = await server.startAndWait('names-parent');
    assert.equal(run.statusLabel, 'failed');
    assert.equal(run.nodes[0].statusLabel, 'failed');
    assert.match(run.nodes[0].error, /"PATH".*reserved/);
    assert.deepEqual(await created(), []);
  });

  test('a fan-out item that reads like NAME=value reaches the child as its first positional param, never as a name', async () => {
    await server.writeDag('items-parent', [
      'steps:',
      '  - name: fan',
      '    call: items-child',
      '    parallel: ["PATH=/nowhere", "a-b=1", "BASH_ENV=/tmp/x", "plain"]',
      '---',
      'name: items-child',
      'steps:',
      '  - name: show',
      `    command: printf '%s' "item $1"`,
    ].join('\n'));
    const run = await server.startAndWait('items-parent');
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run.nodes[0]));
    const { subRuns } = (await server.call('GET', `/dag-runs/items-parent/${run.dagRunId}/sub-dag-runs`)).body;
    const printed = await Promise.all(subRuns.map(async (sub: any) =>
      (await server.call('GET', `/dag-runs/items-parent/${run.dagRunId}/sub-dag-runs/${sub.dagRunId}/steps/show/log`)).body.content));
    assert.deepEqual(printed.sort(), ['item BASH_ENV=/tmp/x', 'item PATH=/nowhere', 'item a-b=1', 'item plain']);
  });

  const VALUES_DAG = [
    'shell: bash',
    'params:',
    '  - MSG: default',
    'steps:',
    '  - name: bare',
    '    command: echo $MSG',
    '  - name: dquoted',
    '    command: echo "$MSG"',
    '  - name: inside',
    '    command: echo "text ${MSG} end"',
    '  - name: squoted',
    "    command: echo 'in ${MSG} single'",
    '  - name: braced',
    '    command: echo "${MSG}"',
    '  - name: fallback',
    '    command: echo "fb ${MSG:-none}"',
    '  - name: positional',
    '    command: echo "pos $1"',
    '  - name: script',
    '    script: |',
    '      X="$MSG"',
    `      printf '%s\\n' "script $X"`,
    `      printf '%s\\n' "again \${MSG}"`,
    '      echo bare ${MSG} >/dev/null',
    '  - name: heredoc',
    '    script: |',
    '      cat <<EOF',
    '      doc ${MSG}',
    '      EOF',
    '  - name: quoted-doc',
    '    script: |',
    "      cat <<'EOF'",
    '      ${MSG}',
    '      EOF',
    '  - name: produce',
    `    command: printf '%s' "$MSG"`,
    '    output: OUT',
    '  - name: consume',
    '    command: echo "out $OUT"',
    '  - name: consume-bare',
    '    command: echo $OUT',
    '  - name: guarded',
    '    preconditions:',
    '      - command: echo $MSG "$MSG" >/dev/null',
    '    command: echo guarded',
    '  - name: ticked',
    '    env:',
    `      - TICKED: "\`printf '%s' \\"$MSG\\"\`"`,
    '      - LATER: "`printf ok` ${MSG}"',
    `    command: printf '%s\\n' "ticked $TICKED" "later $LATER"`,
  ].join('\n');

  /** The steps that print the value verbatim: where the command quoted it, and what an output carried. */
  const verbatim = (value: string): Record<string, string> => ({
    dquoted: value, inside: `text ${value} end`, squoted: `in ${value} single`, braced: value, fallback: `fb ${value}`, positional: `pos ${value}`,
    script: `script ${value}\nagain ${value}`, heredoc: `doc ${value}`,
    // The shell never expands a quoted here-document: a value that could end it stays a reference.
    'quoted-doc': /\n|EOF/.test(value) ? '${MSG}' : value, consume: `out ${value}`, guarded: 'guarded', ticked: `ticked ${value}\nlater ok ${value}`,
  });

  test('no character of a param, positional param, output or backtick value runs as shell syntax, whatever the quoting', async () => {
    await server.writeDag('values-safe', VALUES_DAG);
    const attacks = [
      `$(touch ${markers}/dollar)`,
      `\`touch ${markers}/backtick\``,
      `"; touch ${markers}/dquote; echo "`,
      `'; touch ${markers}/squote; echo '`,
      '\\',
      `x\ntouch ${markers}/newline`,
      `\${IFS}$(touch\${IFS}${markers}/ifs)`,
      'EOF',
    ];
    for (const value of attacks) {
      const run = await server.startAndWait('values-safe', { params: JSON.stringify({ MSG: value, 1: value }) });
      assert.deepEqual(await created(), [], `value ${JSON.stringify(value)} ran as code`);
      assert.equal(run.statusLabel, 'succeeded', `${JSON.stringify(value)}: ${JSON.stringify(run.nodes.map((node: any) => [node.step.name, node.statusLabel, node.error]))}`);
      for (const [step, expected] of Object.entries(verbatim(value))) {
        assert.equal(await server.stepLog('values-safe', run.dagRunId, step), expected, `step ${step} with ${JSON.stringify(value)}`);
      }
    }
  });

  test('ordinary values print what they printed before', async () => {
    await server.writeDag('values-plain', [
      'shell: bash',
      'params:',
      '  - MSG: default',
      '  - CONFIG: "{}"',
      'steps:',
      ...['echo $MSG', 'echo "$MSG"', 'echo "text ${MSG} end"', "echo 'in ${MSG} single'", "echo '$MSG'", 'echo "${CONFIG}"', 'echo ${CONFIG.user} "${CONFIG.tags}"',
        'echo "day ${NOPE:-$(printf fallback)}" ${MSG:-none}']
        .flatMap((command, index) => [`  - name: s${index}`, `    command: ${JSON.stringify(command)}`]),
      '  - name: script',
      '    script: |',
      "      cat <<'EOF'",
      '      quoted ${MSG}',
      '      EOF',
    ].join('\n'));
    const config = JSON.stringify({ user: 'ann', tags: ['a b', 'c'] });
    const run = await server.startAndWait('values-plain', { params: JSON.stringify({ MSG: 'hello   world', CONFIG: config }) });
    assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run.nodes));
    const expected = ['hello world', 'hello   world', 'text hello   world end', 'in hello   world single', '$MSG', config, 'ann ["a b","c"]', 'day fallback hello world'];
    for (const [index, line] of expected.entries()) assert.equal(await server.stepLog('values-plain', run.dagRunId, `s${index}`), line, `s${index}`);
    assert.equal(await server.stepLog('values-plain', run.dagRunId, 'script'), 'quoted hello   world');
  });
});

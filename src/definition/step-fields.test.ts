// Step fields and the executor types of the definition format: the normalised model, or the exact errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';

const base = { baseDir: '/dags', fileName: 'demo' };
/** A one-step DAG whose step is `fields` (YAML lines of the step map). */
const step = (fields: string, root = '') => `${root}steps:\n${fields.split('\n').map((line, i) => `${i === 0 ? '  - ' : '    '}${line}`).join('\n')}\n`;

const valid: Array<[string, string, (step: any) => unknown, unknown, string?]> = [
  ['output files resolve against the step directory', 'command: echo hi\ndir: work\nstdout: out.log\nstderr: /var/log/err.log',
    (s) => [s.dir, s.stdout, s.stderr], ['/dags/work', '/dags/work/out.log', '/var/log/err.log']],
  ['timeout, mail, shell packages', 'command: echo hi\ntimeoutSec: 30\nmailOnError: true\nshellPackages: [jq, curl]',
    (s) => [s.timeoutSec, s.mailOnError, s.shellPackages], [30, true, ['jq', 'curl']]],
  ['output object form', 'command: echo 5\noutput:\n  name: TOTAL_COUNT\n  key: total\n  omit: true', (s) => [s.output, s.outputKey, s.outputOmit], ['TOTAL_COUNT', 'total', true]],
  ['a call with params as a string', 'call: child\nparams: "A=1 B=two"', (s) => [s.name, s.call, s.params], ['dag_1', 'child', 'A=1 B=two']],
  ['run read as call, params as a map', 'run: child\nparams:\n  A: 1\n  B: two', (s) => [s.call, s.params], ['child', { A: '1', B: 'two' }]],
  ['params as a list of one-key maps, in their order, as Dagu reads them', 'call: child\nparams:\n  - B: two words\n  - A: 1', (s) => [s.params, Object.keys(s.params as object)], [{ B: 'two words', A: '1' }, ['B', 'A']]],
  ['parallel as a list', 'call: child\nparallel: [a, b, c]', (s) => s.parallel, { items: ['a', 'b', 'c'] }],
  ['parallel as an object', 'call: child\nparallel:\n  items: ${ITEMS}\n  maxConcurrent: 2', (s) => s.parallel, { items: '${ITEMS}', maxConcurrent: 2 }],
  ['parallel with maxConcurrent beside it', 'call: child\nparallel: [1, 2]\nmaxConcurrent: 1', (s) => s.parallel, { items: [1, 2], maxConcurrent: 1 }],
  ['the executor as a type name', 'command: echo hi\nexecutor: shell', (s) => s.executor, { type: 'shell', config: {} }],
  ['a container step', 'command: echo hi\nexecutor:\n  type: docker\n  config:\n    image: alpine\n    autoRemove: true', (s) => s.executor,
    { type: 'docker', config: { image: 'alpine', autoRemove: true } }],
  ['a container step with every nested setting', 'command: echo hi\nexecutor:\n  type: docker\n  config:\n    containerName: app\n    image: alpine\n    container:\n      env: [A=1]\n      workingDir: /w\n      exposedPorts:\n        80/tcp: {}\n    host:\n      binds: ["/a:/b"]\n      portBindings:\n        80/tcp: [{hostIP: 0.0.0.0, hostPort: "8080"}]\n    network:\n      EndpointsConfig:\n        net1: {Aliases: [x]}\n    exec:\n      user: root\n      workingDir: /w\n      env: [B=2]',
    (s) => Object.keys(s.executor.config), ['containerName', 'image', 'container', 'host', 'network', 'exec']],
  ['a container step may rely on the DAG container', 'command: echo hi\nexecutor: docker', (s) => s.executor.type, 'docker', 'container:\n  image: alpine\n'],
  ['an ssh step with the DAG ssh', 'command: uptime\nexecutor: ssh', (s) => s.executor.type, 'ssh', 'ssh:\n  host: h\n'],
  ['an http step', 'command: GET https://example.com/health\nexecutor:\n  type: http\n  config:\n    headers:\n      Accept: application/json\n    timeout: 5\n    silent: true',
    (s) => s.executor.config, { headers: { Accept: 'application/json' }, timeout: 5, silent: true }],
  ['an archive step', 'command: extract\nexecutor:\n  type: archive\n  config:\n    source: a.tar.gz\n    destination: out', (s) => s.executor.type, 'archive'],
  ['a mail step', 'executor:\n  type: mail\n  config:\n    to: a@example.com\n    subject: hi', (s) => s.executor.type, 'mail'],
  ['a jq step', 'command: .items[0]\nscript: \'{"items": [1]}\'\nexecutor: jq', (s) => [s.command, s.executor.type], ['.items[0]', 'jq']],
  // Dagu reads the input when the step runs, once its variables are expanded.
  ['a jq step whose input is JSON only once expanded', 'command: .n\nscript: \'{"n": ${N}}\'\nexecutor: jq', (s) => s.script, '{"n": ${N}}'],
  ['a jq filter over several lines stays the command', 'command: |\n  .items[]\n  | .id\nscript: \'{"items": []}\'\nexecutor: jq',
    (s) => [s.command, s.script], ['.items[]\n| .id', '{"items": []}']],
  ['a dag executor', 'command: child\nexecutor: dag', (s) => s.executor.type, 'dag'],
];

for (const [name, fields, pick, expected, root] of valid) {
  test(`valid: ${name}`, () => {
    const { dag, errors } = parseDag(step(fields, root), base);
    assert.deepEqual(errors, []);
    assert.deepEqual(pick(dag!.steps[0]), expected);
  });
}

const invalid: Array<[string, string, string[]]> = [
  ['call and run together', 'call: a\nrun: b', ['steps[0].run (line 3): use call or run (its old name), not both']],
  ['dir and workingDir together', 'command: x\ndir: a\nworkingDir: b', ['steps[0].workingDir (line 4): use dir or workingDir, not both']],
  ['parallel without a call', 'command: echo $ITEM\nparallel: [a, b]', ['steps[0].parallel (line 3): parallel fans out a sub DAG: it needs call']],
  ['maxConcurrent without parallel', 'call: child\nmaxConcurrent: 2', ['steps[0].maxConcurrent (line 3): needs parallel']],
  ['parallel without items', 'call: child\nparallel:\n  maxConcurrent: 2', ['steps[0].parallel (line 3): needs items: a list or a variable']],
  ['an output without a name', 'command: x\noutput:\n  key: k', ['steps[0].output.name (line 3): must be a variable name']],
  ['params of the wrong type', 'call: child\nparams: [1, 2]', ['steps[0].params (line 3): must be a string, a map, or a list of one-key maps']],
  ['params listing a map of two keys', 'call: child\nparams:\n  - A: 1\n    B: 2', ['steps[0].params (line 3): must be a string, a map, or a list of one-key maps']],
  ['an unknown executor', 'command: x\nexecutor: teleport', ['steps[0].executor (line 3): unknown executor "teleport"']],
  ['a container executor without image or containerName', 'command: x\nexecutor:\n  type: docker\n  config:\n    pull: always',
    ['steps[0].executor.config (line 5): a container executor needs image or containerName']],
  ['nested container settings with a typo and a wrong type', 'command: x\nexecutor:\n  type: docker\n  config:\n    image: alpine\n    host:\n      bind: [a]\n      portBindings:\n        80/tcp: none\n    exec:\n      user: 5\n      env: {A: 1}',
    ['steps[0].executor.config.host.bind (line 8): unknown field "bind"; did you mean "binds"?',
      'steps[0].executor.config.host.portBindings.80/tcp (line 10): must be a list of {hostIP, hostPort}',
      'steps[0].executor.config.exec.env (line 13): must be a string or a list of strings']],
  ['a container config key that does not exist', 'command: x\nexecutor:\n  type: docker\n  config:\n    image: alpine\n    imagePull: never',
    ['steps[0].executor.config.imagePull (line 7): unknown field "imagePull"']],
  ['an ssh step with no host anywhere', 'command: uptime\nexecutor: ssh', ['steps[0].executor.config (line 3): an ssh executor needs a host (here or in the DAG\'s ssh)']],
  ['an http command without a URL', 'command: fetch\nexecutor: http', ['steps[0] (line 2): an http step\'s command is a method and a URL, such as "GET https://example.com"']],
  ['an archive step with another command', 'command: unzip\nexecutor: archive', ['steps[0] (line 2): an archive step\'s command is extract, create or list']],
  ['a mail step without recipients', 'executor:\n  type: mail\n  config:\n    subject: hi', ['steps[0].executor.config (line 4): a mail step needs to']],
];

for (const [name, fields, expected] of invalid) {
  test(`invalid: ${name}`, () => {
    assert.deepEqual(parseDag(step(fields), base).errors, expected);
  });
}

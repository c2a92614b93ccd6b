// Root fields (identity, schedule, params and env, limits, services, handlers) in their forms: the normalised model, or the exact errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';

const base = { baseDir: '/dags', fileName: 'demo' };
const withRoot = (fields: string) => `${fields}\nsteps:\n  - echo hi\n`;

const valid: Array<[string, string, (dag: any) => unknown, unknown]> = [
  ['defaults of the service fields', 'description: d', (d) => ({
    skipIfSuccessful: d.skipIfSuccessful, restartWaitSec: d.restartWaitSec, runConfig: d.runConfig, secrets: d.secrets, dotenv: d.dotenv,
    registryAuths: d.registryAuths, workerSelector: d.workerSelector, mailOn: d.mailOn, handlerOn: d.handlerOn,
    container: d.container, ssh: d.ssh, otel: d.otel, smtp: d.smtp, queue: d.queue,
  }), {
    skipIfSuccessful: false, restartWaitSec: 0, runConfig: { disableParamEdit: false, disableRunIdEdit: false }, secrets: [], dotenv: ['.env'],
    registryAuths: {}, workerSelector: {}, mailOn: { failure: false, success: false }, handlerOn: {},
    container: undefined, ssh: undefined, otel: undefined, smtp: undefined, queue: undefined,
  }],
  ['run settings', 'skipIfSuccessful: true\nrestartWaitSec: 30\nrunConfig:\n  disableParamEdit: true\nqueue: batch\nworkerSelector:\n  gpu: "true"\n  region: eu',
    (d) => [d.skipIfSuccessful, d.restartWaitSec, d.runConfig, d.queue, d.workerSelector],
    [true, 30, { disableParamEdit: true, disableRunIdEdit: false }, 'batch', { gpu: 'true', region: 'eu' }]],
  ['secrets from env and file', 'secrets:\n  - name: API_TOKEN\n    provider: env\n    key: PROD_TOKEN\n  - name: DB_PASS\n    provider: file\n    key: secrets/db\n    options:\n      trim: "yes"',
    (d) => d.secrets, [
      { name: 'API_TOKEN', provider: 'env', key: 'PROD_TOKEN', options: {} },
      { name: 'DB_PASS', provider: 'file', key: 'secrets/db', options: { trim: 'yes' } },
    ]],
  ['dotenv as a string', 'dotenv: config/.env.local', (d) => d.dotenv, ['config/.env.local']],
  ['dotenv as a list', 'dotenv:\n  - .env\n  - .env.prod', (d) => d.dotenv, ['.env', '.env.prod']],
  ['dotenv disabled', 'dotenv: []', (d) => d.dotenv, []],
  ['a DAG-level container', 'container:\n  image: alpine:3\n  volumes: ["./data:/data:ro"]\n  env: ["A=1"]\n  startup: command\n  command: ["sleep", "infinity"]\n  waitFor: healthy\n  keepContainer: true',
    (d) => d.container, {
      image: 'alpine:3', pullPolicy: 'missing', env: ['A=1'], volumes: ['./data:/data:ro'], ports: [], startup: 'command',
      command: ['sleep', 'infinity'], waitFor: 'healthy', restartPolicy: 'no', keepContainer: true,
    }],
  ['DAG-level ssh with defaults', 'ssh:\n  user: deploy\n  host: example.com', (d) => d.ssh, { user: 'deploy', host: 'example.com', port: '22', strictHostKey: true }],
  ['registry credentials', 'registryAuths:\n  ghcr.io:\n    username: me\n    password: ${TOKEN}', (d) => d.registryAuths, { 'ghcr.io': { username: 'me', password: '${TOKEN}' } }],
  ['mail settings', 'mailOn:\n  failure: true\nerrorMail:\n  from: ops@example.com\n  to: [a@example.com, b@example.com]\n  prefix: "[ERR]"\n  attachLogs: true\ninfoMail:\n  to: c@example.com\nsmtp:\n  host: smtp.example.com\n  port: 587',
    (d) => [d.mailOn, d.errorMail, d.infoMail, d.smtp], [
      { failure: true, success: false },
      { from: 'ops@example.com', to: ['a@example.com', 'b@example.com'], prefix: '[ERR]', attachLogs: true },
      { to: ['c@example.com'], attachLogs: false },
      { host: 'smtp.example.com', port: '587' },
    ]],
  ['tracing', 'otel:\n  enabled: true\n  endpoint: localhost:4317\n  insecure: true\n  timeout: 10s\n  headers:\n    x-key: v\n  resource:\n    service.name: troupe',
    (d) => d.otel, { enabled: true, endpoint: 'localhost:4317', headers: { 'x-key': 'v' }, insecure: true, timeout: '10s', resource: { 'service.name': 'troupe' } }],
  ['handlers, cancel read as abort', 'handlerOn:\n  init: echo init\n  success:\n    command: echo ok\n  cancel:\n    command: echo aborted\n  exit:\n    name: bye\n    command: echo bye',
    (d) => Object.fromEntries(Object.entries(d.handlerOn).map(([key, step]: [string, any]) => [key, [step.name, step.command]])),
    { init: ['onInit', 'echo init'], success: ['onSuccess', 'echo ok'], abort: ['onCancel', 'echo aborted'], exit: ['bye', 'echo bye'] }],
];

for (const [name, fields, pick, expected] of valid) {
  test(`valid: ${name}`, () => {
    const { dag, errors } = parseDag(withRoot(fields), base);
    assert.deepEqual(errors, []);
    assert.deepEqual(pick(dag), expected);
  });
}

const invalid: Array<[string, string, string[]]> = [
  ['a secret without provider and with a bad name', 'secrets:\n  - name: 1BAD\n    key: X', ['secrets[0].name (line 2): invalid variable name "1BAD"', 'secrets[0] (line 2): needs a provider (env or file)']],
  ['an unknown secret provider', 'secrets:\n  - name: A\n    provider: vault\n    key: x', ['secrets[0].provider (line 3): must be "env" or "file"']],
  ['a duplicate secret', 'secrets:\n  - {name: A, provider: env, key: X}\n  - {name: A, provider: env, key: Y}', ['secrets[1].name (line 3): duplicate secret "A"']],
  ['ssh together with container', 'container:\n  image: alpine\nssh:\n  host: h', ['ssh (line 3): ssh and container cannot both be set at DAG level']],
  ['a container without image', 'container:\n  pullPolicy: sometimes', ['container.pullPolicy (line 2): must be one of "always", "missing", "never"', 'container (line 1): needs an image']],
  ['ssh without host, with a bad port', 'ssh:\n  user: u\n  port: twenty', ['ssh (line 1): needs a host', 'ssh.port (line 3): must be a port number']],
  ['a mail address that is not one', 'errorMail:\n  to: nobody', ['errorMail (line 1): "nobody" is not an email address']],
  ['an otel timeout that is not a duration', 'otel:\n  enabled: true\n  endpoint: x\n  timeout: soon', ['otel.timeout (line 4): must be a duration such as 10s or 1m30s']],
  ['an unknown handler', 'handlerOn:\n  finally: echo x', ['handlerOn.finally (line 2): unknown field "finally"']],
  ['abort and cancel together', 'handlerOn:\n  abort: echo a\n  cancel: echo c', ['handlerOn.cancel (line 3): use abort or cancel (its old name), not both']],
  ['a handler with dependencies', 'handlerOn:\n  exit:\n    command: echo x\n    depends: [cmd_1]', ['handlerOn.exit.depends (line 4): a handler has no dependencies']],
  ['runConfig with a typo', 'runConfig:\n  disableParamsEdit: true', ['runConfig.disableParamsEdit (line 2): unknown field "disableParamsEdit"; did you mean "disableParamEdit"?']],
];

for (const [name, fields, expected] of invalid) {
  test(`invalid: ${name}`, () => {
    assert.deepEqual(parseDag(withRoot(fields), base).errors, expected);
  });
}

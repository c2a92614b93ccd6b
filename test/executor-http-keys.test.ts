// The http executor's other Dagu keys, against a real HTTP server started here: `json` prints the
// response as Dagu's JSON document, `debug` reports the request and the response on stderr, a
// `script` is the config in JSON, values are read as Dagu's weakly typed decoder reads them, and a
// body goes with the methods and the Content-Type Dagu's client gives it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer, stepError } from './helpers.ts';

interface Seen { method: string; url: string; type: string | null; length: string | null; body: string }

describe('the http executor: Dagu\'s json, debug, script and weakly typed config', () => {
  let troupe: TestServer;
  let server: Server;
  let origin: string;
  const seen = new Map<string, Seen>();

  before(async () => {
    troupe = await startTestServer();
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const body = Buffer.concat(chunks).toString('utf8');
        seen.set(url.pathname, { method: req.method ?? '', url: req.url ?? '', type: req.headers['content-type'] ?? null, length: req.headers['content-length'] ?? null, body });
        res.sendDate = false;
        const send = (status: number, type: string, text: string) => {
          res.writeHead(status, { 'content-type': type, 'x-multi': ['a', 'b'], 'content-length': Buffer.byteLength(text), connection: 'close' });
          res.end(text);
        };
        if (url.pathname.startsWith('/doc')) send(url.pathname.endsWith('/missing') ? 404 : 200, 'application/json', '{"b": [1, "x<y>&z"], "10": {}, "2": [], "a": null, "n": 1.5}');
        else if (url.pathname === '/text') send(200, 'text/plain', 'plain words');
        else if (url.pathname === '/empty') send(200, 'text/plain', '');
        else send(200, 'text/plain', 'ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await troupe.close();
  });

  const run = async (name: string, steps: string[]) => {
    const created = await troupe.call('POST', '/dags', { name, spec: ['type: graph', 'steps:', ...steps].join('\n') });
    assert.equal(created.status, 201, created.text);
    return troupe.startAndWait(name);
  };
  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await troupe.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;
  const step = (name: string, config: string, command: string, extra: string[] = []) => [
    `  - name: ${name}`, '    executor:', '      type: http', `      config: ${config}`, `    command: ${command}`, ...extra,
  ];

  // Go's MarshalIndent with one space: keys in byte order ("10" before "2"), <, > and & escaped.
  const body = [
    ' "body": {', '  "10": {},', '  "2": [],', '  "a": null,', '  "b": [', '   1,', '   "x\\u003cy\\u003e\\u0026z"', '  ],', '  "n": 1.5', ' }',
  ].join('\n');
  const headers = [
    ' "headers": {', '  "Connection": [', '   "close"', '  ],', '  "Content-Length": [', '   "60"', '  ],',
    '  "Content-Type": [', '   "application/json"', '  ],', '  "X-Multi": [', '   "a",', '   "b"', '  ]', ' },',
  ].join('\n');

  test('json prints {status_code, headers, body} as Dagu does; silent on a 2xx leaves 0 and null; another status still fails', async () => {
    const dagRun = await run('http_json', [
      ...step('full', '{json: true}', `GET ${origin}/doc`, ['    output: DOC']),
      ...step('silent', '{json: true, silent: true}', `GET ${origin}/doc/silent`),
      ...step('missing', '{json: true, silent: true}', `GET ${origin}/doc/missing`),
    ]);
    assert.equal(node(dagRun, 'full').statusLabel, 'succeeded', node(dagRun, 'full').error);
    const full = `{\n "status_code": 200,\n${headers}\n${body}\n}`;
    assert.equal(await troupe.stepLog('http_json', dagRun.dagRunId, 'full'), full);
    assert.equal((await troupe.call('GET', `/dag-runs/http_json/${dagRun.dagRunId}/outputs`)).body.outputs.doc, full);
    assert.equal(await troupe.stepLog('http_json', dagRun.dagRunId, 'silent'), `{\n "status_code": 0,\n "headers": null,\n${body}\n}`);
    const missing = node(dagRun, 'missing');
    assert.deepEqual([missing.statusLabel, missing.error], ['failed', stepError('missing', 'http status code not 2xx: 404 Not Found')]);
    assert.equal(await troupe.stepLog('http_json', dagRun.dagRunId, 'missing'), `{\n "status_code": 404,\n${headers}\n${body}\n}`);
  });

  test('json on a body that is no JSON fails the step with Go\'s message and prints nothing', async () => {
    const dagRun = await run('http_json_bad', [
      ...step('text', '{json: true}', `GET ${origin}/text`),
      ...step('empty', '{json: true}', `GET ${origin}/empty`),
    ]);
    assert.deepEqual([node(dagRun, 'text').statusLabel, node(dagRun, 'text').error], ['failed', stepError('text', 'invalid character \'p\' looking for beginning of value')]);
    assert.deepEqual([node(dagRun, 'empty').statusLabel, node(dagRun, 'empty').error], ['failed', stepError('empty', 'unexpected end of JSON input')]);
    assert.equal(await troupe.stepLog('http_json_bad', dagRun.dagRunId, 'text'), '');
  });

  test('values are read as Dagu reads them: "true", 1 and any case of a key name; a value Dagu cannot read is refused at load', async () => {
    const dagRun = await run('http_weak', [
      ...step('weak', '{Silent: "true", JSON: 1, TIMEOUT: "5", headers: {X-Num: 5}}', `GET ${origin}/doc/weak`),
    ]);
    assert.equal(node(dagRun, 'weak').statusLabel, 'succeeded', node(dagRun, 'weak').error);
    assert.equal(await troupe.stepLog('http_weak', dagRun.dagRunId, 'weak'), `{\n "status_code": 0,\n "headers": null,\n${body}\n}`);
    const refused = await troupe.call('POST', '/dags', { name: 'http_weak_bad', spec: ['steps:', ...step('bad', '{silent: maybe, timeout: soon}', `GET ${origin}/x`)].join('\n') });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.message, /silent.*must be true or false/);
    assert.match(refused.body.message, /timeout.*must be an integer/);
  });

  test('a script is the config, in JSON, and the config is then ignored; a script that is no JSON object fails the step', async () => {
    const dagRun = await run('http_script', [
      '  - name: script', '    executor:', '      type: http', '      config: {silent: false}',
      `    script: '{"json": true, "silent": true, "query": {"s": "1"}}'`, `    command: GET ${origin}/doc/script`,
      '  - name: broken', '    executor: http', '    script: not json', `    command: GET ${origin}/text`,
    ]);
    assert.equal(node(dagRun, 'script').statusLabel, 'succeeded', node(dagRun, 'script').error);
    assert.equal(seen.get('/doc/script')?.url, '/doc/script?s=1');
    assert.equal(await troupe.stepLog('http_script', dagRun.dagRunId, 'script'), `{\n "status_code": 0,\n "headers": null,\n${body}\n}`);
    assert.equal(node(dagRun, 'broken').statusLabel, 'failed');
    assert.match(node(dagRun, 'broken').error, /^failed to execute step "broken": http: the script is read as the step's config, in JSON: /);
  });

  test('a body goes with POST (typed by sniffing when no Content-Type is given, even empty) and not with GET', async () => {
    const dagRun = await run('http_body', [
      ...step('get', '{body: xyz, silent: true}', `GET ${origin}/get`),
      ...step('post', '{body: \'{"a": 1}\', silent: true}', `POST ${origin}/post`),
      ...step('html', '{body: "<html><body>x", silent: true}', `PUT ${origin}/html`),
      ...step('empty', '{silent: true}', `POST ${origin}/empty-post`),
    ]);
    for (const name of ['get', 'post', 'html', 'empty']) assert.equal(node(dagRun, name).statusLabel, 'succeeded', node(dagRun, name).error);
    assert.deepEqual(seen.get('/get'), { method: 'GET', url: '/get', type: null, length: null, body: '' });
    assert.deepEqual(seen.get('/post'), { method: 'POST', url: '/post', type: 'text/plain; charset=utf-8', length: '8', body: '{"a": 1}' });
    assert.equal(seen.get('/html')?.type, 'text/html; charset=utf-8');
    assert.deepEqual(seen.get('/empty-post'), { method: 'POST', url: '/empty-post', type: 'text/plain; charset=utf-8', length: '0', body: '' });
  });

  test('debug reports the request and the response on the step\'s stderr; stdout is as without it', async () => {
    const dagRun = await run('http_debug', [...step('debug', '{debug: true, body: hello, headers: {X-Auth: yes}}', `POST ${origin}/text?q=1`)]);
    assert.equal(node(dagRun, 'debug').statusLabel, 'succeeded', node(dagRun, 'debug').error);
    assert.equal(await troupe.stepLog('http_debug', dagRun.dagRunId, 'debug'), '200 OK\nConnection: close\r\nContent-Length: 11\r\nContent-Type: text/plain\r\nX-Multi: a\r\nX-Multi: b\r\nplain words');
    const report = await stderrLog('http_debug', dagRun.dagRunId, 'debug');
    assert.match(report, /~~~ REQUEST ~~~\nPOST {2}\/text\?q=1 {2}HTTP\/1\.1\nHOST {3}: 127\.0\.0\.1:\d+\nHEADERS:\n\tX-Auth: yes\n\tContent-Type: text\/plain; charset=utf-8\nBODY {3}:\nhello\n/);
    assert.match(report, /~~~ RESPONSE ~~~\nSTATUS {7}: 200 OK\n/);
    assert.match(report, /\tX-Multi: a, b\nBODY {9}:\nplain words\n={78}\n?$/);
  });
});

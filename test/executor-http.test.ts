// `executor: http` sends `METHOD URL` with undici to a real HTTP(S) server
// started here. A 2xx status succeeds; the output is the body (silent) or Dagu's status line,
// headers and body; any other status, a refused connection, a TLS error or the config timeout
// fails the step with the reason; a stop aborts the request.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { startTestServer, waitUntil, type TestServer, stepError } from './helpers.ts';

const SECRET = 'http-S3CRET-5be0c1d2';
const SECRET_ENV = 'HTTP_EXECUTOR_TEST_TOKEN';

/** What the test server received, by request path. */
interface Seen { method: string; url: string; headers: Record<string, unknown>; body: string }

function handler(seen: Map<string, Seen>, hanging: Set<ServerResponse>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = Buffer.concat(chunks).toString('utf8');
      seen.set(url.pathname, { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      // Fixed headers, so that the whole printed response is known.
      res.sendDate = false;
      switch (url.pathname) {
        case '/hello': {
          const text = 'hello, world\n';
          res.writeHead(200, { 'x-b': '1', 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'content-length': Buffer.byteLength(text), connection: 'close' });
          res.end(text);
          return;
        }
        case '/echo':
          res.writeHead(201, { 'content-type': 'application/json', connection: 'close' });
          res.end(JSON.stringify({ method: req.method, url: req.url, auth: req.headers['x-auth'] ?? null, type: req.headers['content-type'] ?? null, body }));
          return;
        case '/missing':
          res.writeHead(404, 'Not Found', { 'content-length': 4, connection: 'close' });
          res.end('nope');
          return;
        case '/hang':
          // Never answers: only the step's timeout or a stop ends the request.
          hanging.add(res);
          res.on('close', () => hanging.delete(res));
          return;
        default:
          res.writeHead(500, { connection: 'close' });
          res.end();
      }
    });
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the http executor', () => {
  let troupe: TestServer;
  let plain: Server;
  let tls: Server;
  let origin: string;
  let tlsOrigin: string;
  const seen = new Map<string, Seen>();
  const hanging = new Set<ServerResponse>();

  before(async () => {
    process.env[SECRET_ENV] = SECRET;
    troupe = await startTestServer();
    plain = createServer(handler(seen, hanging));
    origin = `http://${await listen(plain)}`;
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], { keySize: 2048, algorithm: 'sha256' });
    tls = createTlsServer({ key: pems.private, cert: pems.cert }, handler(seen, hanging));
    tlsOrigin = `https://${await listen(tls)}`;
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    plain.closeAllConnections();
    tls.closeAllConnections();
    await Promise.all([new Promise((resolve) => plain.close(resolve)), new Promise((resolve) => tls.close(resolve))]);
    await troupe.close();
    delete process.env[SECRET_ENV];
  });

  const create = async (name: string, spec: string) => {
    const created = await troupe.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
  };
  const run = async (name: string, spec: string) => {
    await create(name, spec);
    return troupe.startAndWait(name);
  };
  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await troupe.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;
  const outputs = async (name: string, dagRunId: string) => (await troupe.call('GET', `/dag-runs/${name}/${dagRunId}/outputs`)).body.outputs;

  test('GET prints the status line, the headers (canonical names, sorted, one line per value) and the body, as Dagu does; the output is captured', async () => {
    const spec = [
      'steps:',
      '  - name: get',
      '    executor: http',
      `    command: GET ${origin}/hello`,
      '    output: PAGE',
    ].join('\n');
    const dagRun = await run('http_get', spec);
    assert.equal(node(dagRun, 'get').statusLabel, 'succeeded', node(dagRun, 'get').error);
    const expected = '200 OK\nConnection: close\r\nContent-Length: 13\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-B: 1\r\nhello, world';
    assert.equal(await troupe.stepLog('http_get', dagRun.dagRunId, 'get'), expected);
    assert.equal((await outputs('http_get', dagRun.dagRunId)).page, expected);
    assert.equal(seen.get('/hello')?.method, 'GET');
  });

  test('POST sends the headers and the body; query parameters follow the URL\'s own, sorted; silent prints the body alone', async () => {
    const spec = [
      'steps:',
      '  - name: post',
      '    executor:',
      '      type: http',
      '      config:',
      '        silent: true',
      '        headers:',
      '          Content-Type: application/json',
      '          X-Auth: let-me-in',
      '        query:',
      '          z: last one',
      '          a: "1"',
      `        body: '{"k": "v"}'`,
      `    command: POST ${origin}/echo?keep=yes`,
      '    output: ECHO',
    ].join('\n');
    const dagRun = await run('http_post', spec);
    assert.equal(node(dagRun, 'post').statusLabel, 'succeeded', node(dagRun, 'post').error);
    const body = JSON.stringify({ method: 'POST', url: '/echo?keep=yes&a=1&z=last+one', auth: 'let-me-in', type: 'application/json', body: '{"k": "v"}' });
    assert.equal(await troupe.stepLog('http_post', dagRun.dagRunId, 'post'), body);
    assert.equal((await outputs('http_post', dagRun.dagRunId)).echo, body);
  });

  test('a status other than 2xx fails the step with exit code 1 and the status line in its error; the response is printed even when silent', async () => {
    const spec = [
      'steps:',
      '  - name: missing',
      '    id: missing',
      '    executor:',
      '      type: http',
      '      config: {silent: true}',
      `    command: GET ${origin}/missing`,
      '    continueOn: {failure: true}',
      '  - name: report',
      '    command: echo "exit ${missing.exitCode}"',
    ].join('\n');
    const dagRun = await run('http_404', spec);
    const missing = node(dagRun, 'missing');
    assert.deepEqual([missing.statusLabel, missing.error], ['failed', stepError('missing', 'http status code not 2xx: 404 Not Found')]);
    assert.equal(await troupe.stepLog('http_404', dagRun.dagRunId, 'report'), 'exit 1');
    assert.equal(await troupe.stepLog('http_404', dagRun.dagRunId, 'missing'), '404 Not Found\nConnection: close\r\nContent-Length: 4\r\nnope');
    assert.equal(await stderrLog('http_404', dagRun.dagRunId, 'missing'), 'http status code not 2xx: 404 Not Found');
  });

  test('a refused connection fails the step with undici\'s message, in its error and its stderr log', async () => {
    const closed = createServer();
    const address = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const spec = ['steps:', '  - name: refused', '    executor: http', `    command: GET http://${address}/`].join('\n');
    const dagRun = await run('http_refused', spec);
    const refused = node(dagRun, 'refused');
    assert.equal(refused.statusLabel, 'failed');
    assert.equal(refused.error, stepError('refused', `GET http://${address}/: connect ECONNREFUSED ${address}`));
    assert.equal(stepError('refused', await stderrLog('http_refused', dagRun.dagRunId, 'refused')), refused.error);
  });

  test('config timeout ends a request that gets no answer, failing the step', async () => {
    const spec = [
      'steps:',
      '  - name: slow',
      '    executor:',
      '      type: http',
      '      config: {timeout: 1}',
      `    command: GET ${origin}/hang`,
    ].join('\n');
    const dagRun = await run('http_timeout', spec);
    const slow = node(dagRun, 'slow');
    assert.deepEqual([slow.statusLabel, slow.error], ['failed', stepError('slow', `GET ${origin}/hang: timed out after 1 s (config timeout)`)]);
  });

  test('a stop aborts the request: the server sees its connection closed and the step is aborted', async () => {
    const spec = ['steps:', '  - name: wait', '    executor: http', `    command: GET ${origin}/hang?stop`].join('\n');
    await create('http_stop', spec);
    const started = await troupe.call('POST', '/dags/http_stop/start', {});
    assert.ok(await waitUntil(() => seen.get('/hang')?.url === '/hang?stop' && hanging.size > 0), 'the request reached the server');
    assert.equal((await troupe.call('POST', `/dag-runs/http_stop/${started.body.dagRunId}/stop`)).status, 200);
    const dagRun = await troupe.waitForRun('http_stop', started.body.dagRunId);
    assert.deepEqual([dagRun.statusLabel, node(dagRun, 'wait').statusLabel], ['aborted', 'aborted']);
    assert.ok(await waitUntil(() => hanging.size === 0), 'the request was aborted');
  });

  test('a self-signed certificate fails the step with the TLS error; skipTLSVerify accepts it', async () => {
    const spec = [
      'type: graph',
      'steps:',
      '  - name: strict',
      '    executor: http',
      `    command: GET ${tlsOrigin}/hello`,
      '  - name: lenient',
      '    executor:',
      '      type: http',
      '      config: {skipTLSVerify: true, silent: true}',
      `    command: GET ${tlsOrigin}/hello`,
    ].join('\n');
    const dagRun = await run('http_tls', spec);
    const strict = node(dagRun, 'strict');
    assert.equal(strict.statusLabel, 'failed');
    assert.equal(strict.error, stepError('strict', `GET ${tlsOrigin}/hello: self-signed certificate`));
    assert.equal(node(dagRun, 'lenient').statusLabel, 'succeeded', node(dagRun, 'lenient').error);
    assert.equal(await troupe.stepLog('http_tls', dagRun.dagRunId, 'lenient'), 'hello, world');
  });

  test('variables and secrets in the command are expanded; a secret the server sends back is masked in the log and the output', async () => {
    const spec = [
      'params:',
      '  - ROUTE: echo',
      'secrets:',
      '  - name: TOKEN',
      '    provider: env',
      `    key: ${SECRET_ENV}`,
      'steps:',
      '  - name: token',
      '    executor:',
      '      type: http',
      '      config: {silent: true}',
      `    command: GET ${origin}/\${ROUTE}?token=\${TOKEN}`,
      '    output: ANSWER',
    ].join('\n');
    const dagRun = await run('http_secret', spec);
    assert.equal(node(dagRun, 'token').statusLabel, 'succeeded', node(dagRun, 'token').error);
    assert.equal(seen.get('/echo')?.url, `/echo?token=${SECRET}`);
    const log = await troupe.stepLog('http_secret', dagRun.dagRunId, 'token');
    assert.equal(log, JSON.stringify({ method: 'GET', url: '/echo?token=*******', auth: null, type: null, body: '' }));
    const answer = await troupe.call('GET', `/dag-runs/http_secret/${dagRun.dagRunId}/outputs`);
    assert.ok(!answer.text.includes(SECRET) && answer.text.includes('*******'), answer.text);
  });
});

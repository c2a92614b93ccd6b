// HTTP as clients speak it, over raw sockets on both carriers: pipelining, HEAD, HTTP/1.0, duplicate
// Content-Length (request smuggling), broken request lines, oversized headers, and /health bursts.
// node:http does all of it; where uWebSockets.js decides before troupe sees the request (see
// src/http/uws-server.ts), the uWS cases assert what troupe guarantees: no answer out of order, a
// smuggled request never runs, the connection is closed, the server stays up.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch, checkRaw, startTestServer, type TestServer } from './helpers.ts';
import { exchange, header, streamBody, type RawResponse } from './raw-http.ts';

const get = (path: string, extra = '') => `GET /api/v2${path} HTTP/1.1\r\nHost: troupe\r\n${extra}\r\n`;
const head = (path: string, extra = '') => `HEAD /api/v2${path} HTTP/1.1\r\nHost: troupe\r\n${extra}\r\n`;

function json(response: RawResponse): any {
  assert.equal(header(response, 'content-type'), 'application/json');
  return JSON.parse(response.body);
}

/** Checks each response against the OpenAPI document as the answer to the request (method, path below /api/v2) of its index. */
async function assertDocumented(requests: Array<[string, string]>, responses: RawResponse[]): Promise<void> {
  assert.equal(responses.length, requests.length);
  for (const [index, [method, path]] of requests.entries()) await checkRaw(method, path, responses[index]);
}

function assertErrorDocument(response: RawResponse, status: number, code: string): void {
  assert.equal(response.status, status);
  const body = json(response);
  assert.equal(body.code, code);
  assert.equal(typeof body.message, 'string');
  assert.equal(header(response, 'connection'), 'close');
}

for (const carrier of ['uws', 'node'] as const) {
  describe(`HTTP protocol on ${carrier}`, () => {
    let server: TestServer;
    let port: number;
    before(async () => {
      server = await startTestServer(carrier);
      port = server.troupe.server.port;
    });
    after(() => server.close());

    const assertAlive = async () => assert.equal((await server.call('GET', '/health')).status, 200);

    test('50 concurrent /health probes all answer 200 (each probe reads back its own write)', async () => {
      const answers = await Promise.all(Array.from({ length: 50 }, () => server.call('GET', '/health')));
      assert.deepEqual(answers.filter((answer) => answer.status !== 200).map((answer) => answer.text), []);
    });

    test('pipelined requests answered from memory are answered in order on one connection', async () => {
      const { responses } = await exchange(port, get('/dag-runs') + get('/dag-runs/none/none') + get('/no-such-route'), { expect: 3 });
      assert.deepEqual(responses.map((response) => response.status), [200, 404, 404]);
      await assertDocumented([['GET', '/dag-runs'], ['GET', '/dag-runs/none/none'], ['GET', '/no-such-route']], responses);
      assert.deepEqual(json(responses[0]), { dagRuns: [] });
      assert.match(json(responses[1]).message, /none/);
      assert.match(json(responses[2]).message, /no-such-route/);
    });

    test('pipelined /health probes and reads are answered in order, on both carriers', async () => {
      // /health answers from the store's background probe, so it never waits on I/O: uWS closes a
      // connection whose next request arrives while an earlier one does (uws-server.ts).
      const { responses } = await exchange(port, get('/health') + get('/health') + get('/dag-runs', 'Connection: close\r\n'));
      assert.deepEqual(responses.map((response) => response.status), [200, 200, 200]);
      await assertDocumented([['GET', '/health'], ['GET', '/health'], ['GET', '/dag-runs']], responses);
      assert.deepEqual(responses.map((response) => Object.keys(json(response))[0]), ['status', 'status', 'dagRuns']);
      await assertAlive();
    });

    test('HEAD is served wherever GET is: the GET body\'s Content-Length, no body, and the connection goes on', async () => {
      const { responses: [full] } = await exchange(port, get('/dag-runs', 'Connection: close\r\n'), { expect: 1 });
      const { responses } = await exchange(port, head('/dag-runs') + head('/no-such-route') + get('/dag-runs', 'Connection: close\r\n'), { heads: [true, true, false] });
      assert.deepEqual(responses.map((response) => [response.status, response.body]), [[200, ''], [404, ''], [200, full.body]]);
      await assertDocumented([['HEAD', '/dag-runs'], ['HEAD', '/no-such-route'], ['GET', '/dag-runs']], responses);
      assert.equal(header(responses[0], 'content-length'), String(Buffer.byteLength(full.body)));
      assert.deepEqual(responses[0].headers.get('content-length'), [header(responses[0], 'content-length')]);
      assert.equal(Number(header(responses[1], 'content-length')) > 0, true);
      const viaFetch = await checkedFetch(`${server.base}/health`, { method: 'HEAD' });
      assert.equal(viaFetch.status, 200);
      assert.equal((await viaFetch.arrayBuffer()).byteLength, 0);
      assert.equal(Number(viaFetch.headers.get('content-length')) > 0, true);
      assert.equal((await checkedFetch(`${server.base}/dag-runs`, { method: 'HEAD', body: undefined })).status, 200);
    });

    test('HTTP/1.0: answered and the connection closed on node:http; an error status and a closed connection on uWS', async () => {
      const { responses, closed } = await exchange(port, 'GET /api/v2/dag-runs HTTP/1.0\r\n\r\n');
      assert.equal(closed, true);
      assert.equal(responses.length, 1);
      if (carrier === 'node') {
        assert.equal(responses[0].status, 200);
        assert.deepEqual(json(responses[0]), { dagRuns: [] });
        await assertDocumented([['GET', '/dag-runs']], responses);
      } else {
        // Not checked against the OpenAPI document: uWS writes this page itself, before any route.
        assert.equal(responses[0].status, 505); // uWS's own page (HttpParser.h consumeRequestLine)
      }
      await assertAlive();
    });

    test('two Content-Length headers: 400 error document and the connection closed; the bytes after never run as a request', async () => {
      // What a proxy trusting the second header forwards as one request; uWS frames by the first.
      const create = JSON.stringify({ name: `smuggled-${carrier}` });
      const smuggled = `POST /api/v2/dags HTTP/1.1\r\nHost: troupe\r\nContent-Type: application/json\r\nContent-Length: ${create.length}\r\n\r\n${create}`;
      // A GET the API answers at once: nothing delays the smuggled request behind it.
      const request = `GET /api/v2/dag-runs HTTP/1.1\r\nHost: troupe\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`;
      const { responses, closed } = await exchange(port, request);
      assert.equal((await server.call('GET', `/dags/smuggled-${carrier}`)).status, 404, 'the smuggled request ran');
      assert.equal(closed, true);
      for (const response of responses) assertErrorDocument(response, 400, 'bad_request');
      for (const response of responses) await checkRaw('GET', '/dag-runs', response);
      if (carrier === 'node') assert.equal(responses.length, 1);

      for (const lengths of [['0', '5'], ['3', '3']]) {
        const alone = await exchange(port, `POST /api/v2/dags/validate HTTP/1.1\r\nHost: troupe\r\nContent-Length: ${lengths[0]}\r\nContent-Length: ${lengths[1]}\r\n\r\n`);
        assert.equal(alone.closed, true);
        assert.equal(alone.responses.length, 1, lengths.join());
        assertErrorDocument(alone.responses[0], 400, 'bad_request');
        await assertDocumented([['POST', '/dags/validate']], alone.responses);
      }
      await assertAlive();
    });

    test('a bad request line or HTTP version: 400 error document on node:http; an error status on uWS; the connection closed', async () => {
      for (const line of ['GET /api/v2/dag-runs HTTP/9.9', 'GET /api/v2/dag-runs HTTP/2.0', 'GET /api/v2/dag-runs HTTP/1.x']) {
        const { responses, closed } = await exchange(port, `${line}\r\nHost: troupe\r\n\r\n`);
        assert.equal(closed, true, line);
        assert.equal(responses.length, 1, line);
        if (carrier === 'node') {
          assertErrorDocument(responses[0], 400, 'bad_request');
          await assertDocumented([['GET', '/dag-runs']], responses);
        } else {
          // Not checked against the OpenAPI document: uWS writes this page itself, before any route.
          assert.equal(responses[0].status, 505, line); // uWS's own page, no hook (HttpErrors.h)
        }
      }
      await assertAlive();
    });

    test('a chunked body past 1 MiB: 413 error document as soon as it passes the limit, the connection closed, the rest never read', async () => {
      // 64 MiB offered; reading it all before answering (the defect) lets the whole of it through.
      const offered = 64 * 1024 * 1024;
      const head = 'POST /api/v2/dags/validate HTTP/1.1\r\nHost: troupe\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
      const { responses, closed, written } = await streamBody(port, head, offered);
      assert.equal(closed, true);
      assert.equal(responses.length, 1);
      assertErrorDocument(responses[0], 413, 'payload_too_large');
      await assertDocumented([['POST', '/dags/validate']], responses);
      // What the kernel's buffers hold beyond the limit, far from all of it.
      assert.ok(written < offered / 4, `${written} bytes of ${offered} were taken before the answer`);
      await assertAlive();
    });

    test('oversized headers: 431 (the error document on node:http) and the connection closed', async () => {
      const { responses, closed } = await exchange(port, get('/dag-runs', `X-Big: ${'a'.repeat(20_000)}\r\n`));
      assert.equal(closed, true);
      assert.equal(responses.length, 1);
      if (carrier === 'node') {
        assertErrorDocument(responses[0], 431, 'headers_too_large');
        await assertDocumented([['GET', '/dag-runs']], responses);
      } else {
        // Not checked against the OpenAPI document: uWS writes this page itself, before any route.
        assert.equal(responses[0].status, 431);
      }
      await assertAlive();
    });
  });
}

describe('HTTP protocol errors on node:http', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('node', { headersTimeoutMs: 300 });
  });
  after(() => server.close());

  test('headers that do not arrive in time: 408 error document and the connection closed', async () => {
    const { responses, closed } = await exchange(server.troupe.server.port, 'GET /api/v2/health HTTP/1.1\r\nHost: troupe\r\n');
    assert.equal(closed, true);
    assert.equal(responses.length, 1);
    assertErrorDocument(responses[0], 408, 'request_timeout');
    await assertDocumented([['GET', '/health']], responses);
  });

  test('a malformed chunked body (a chunk size that is no number): 400 error document and the connection closed', async () => {
    for (const body of ['zz\r\nabc\r\n0\r\n\r\n', '5\r\n{"a":1}\r\n0\r\n\r\n', '3\r\n{}}\r\nnope\r\n']) {
      const request = `POST /api/v2/dags/validate HTTP/1.1\r\nHost: troupe\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
      const { responses, closed } = await exchange(server.troupe.server.port, request);
      assert.equal(closed, true, body);
      assert.equal(responses.length, 1, body);
      assertErrorDocument(responses[0], 400, 'bad_request');
      await assertDocumented([['POST', '/dags/validate']], responses);
    }
    assert.equal((await server.call('GET', '/health')).status, 200);
  });

  test('garbage for a request line, or an HTTP/1.1 request without Host: 400 error document', async () => {
    for (const request of ['HELLO\r\n\r\n', 'GET /api/v2/health HTTP/1.1\r\n\r\n', '\u0001\u0002 / HTTP/1.1\r\n\r\n']) {
      const { responses, closed } = await exchange(server.troupe.server.port, request);
      assert.equal(closed, true, request);
      assert.equal(responses.length, 1, request);
      assertErrorDocument(responses[0], 400, 'bad_request');
      // The two without an API path are not checked against the OpenAPI document: no route to hold them to.
      if (request.startsWith('GET /api/v2/health')) await assertDocumented([['GET', '/health']], responses);
    }
  });
});

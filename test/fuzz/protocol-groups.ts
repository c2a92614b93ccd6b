// Raw protocol groups of the fuzz suite. node:http is held to every rule (troupe controls its error
// answers); uWS answers some malformed requests itself, in HTML, before troupe sees them, so there
// the suite demands liveness and checks only the answers troupe wrote (JSON ones).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { errorDocumentProblems, problemsOf, sendAll } from './harness.ts';
import { PREFIX, fillPath, paramsOf, registeredRoutes, request } from './corpus.ts';
import { exchange as rawExchange, header, type Exchange as RawExchange, type RawResponse } from '../raw-http.ts';
import { malformedCases, protocolCases } from './raw-cases.ts';
import { checkRaw } from '../openapi-check.ts';
import { startFuzzServer, type FuzzServer } from './fixtures.ts';

const asFuzzResponse = (response: RawResponse) => ({ status: response.status, contentType: header(response, 'content-type') ?? '', text: response.body });
/**
 * One exchange, done at the first final answer; a server that keeps the socket open after garbage
 * (uWS holds some until its idle timeout) is not waited on past a few seconds.
 */
const exchange = (port: number, bytes: Buffer | string, options: { heads?: boolean[]; expect?: number; halfClose?: boolean } = {}) =>
  rawExchange(port, bytes, { expect: 1, settleMs: 3_000, ...options });
const summary = (result: RawExchange) => result.responses.map((response) => `${response.status} ${response.body.slice(0, 80)}`).join(' | ') || 'no answer';

/**
 * The problems of every final answer in an exchange, as the HTTP-level groups judge them. Not
 * checked against the OpenAPI document: malformed bytes name no route to hold the answer to.
 */
function answerProblems(name: string, result: RawExchange, home: string, onlyJson: boolean): string[] {
  return result.responses.filter((response) => response.status >= 200).flatMap((response) => {
    const judged = asFuzzResponse(response);
    if (onlyJson && !judged.contentType.startsWith('application/json')) return [];
    const problems = problemsOf({ method: 'RAW', path: name }, judged, home);
    return problems.length > 0 ? [`${name}: ${response.status} ${problems.join('; ')}`] : [];
  });
}

/** The node:http carrier, held to every rule; it has its own server. */
export function nodeProtocolGroup(seed: number): void {
  describe('fuzz: raw protocol on the node:http carrier', () => {
    let fuzz: FuzzServer;
    before(async () => {
      fuzz = await startFuzzServer('node');
    });
    after(() => fuzz.close());

    test('a request node cannot parse, or would refuse itself, gets the JSON error document', async () => {
      for (const bytes of ['GARBAGE\r\n\r\n', `GET /api/v2/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`]) {
        const result = await exchange(fuzz.server.troupe.server.port, bytes);
        assert.equal(result.responses.length, 1, summary(result));
        assert.deepEqual(errorDocumentProblems(asFuzzResponse(result.responses[0])), [], summary(result));
        assert.equal(header(result.responses[0], 'connection'), 'close');
        // GARBAGE names no route to hold its answer to: the error document check above is all it gets.
        if (bytes.startsWith('GET')) await checkRaw('GET', '/health', result.responses[0]);
      }
      // Two answers node writes itself unless told otherwise: a missing Host, an unknown Expect.
      const noHost = await exchange(fuzz.server.troupe.server.port, 'GET /api/v2/health HTTP/1.1\r\n\r\n');
      assert.equal(noHost.responses[0]?.status, 400, summary(noHost));
      assert.deepEqual(errorDocumentProblems(asFuzzResponse(noHost.responses[0])), []);
      await checkRaw('GET', '/health', noHost.responses[0]);
      const expect = await exchange(fuzz.server.troupe.server.port, 'GET /api/v2/health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n');
      assert.equal(expect.responses[0]?.status, 200, summary(expect));
      await checkRaw('GET', '/health', expect.responses[0]);
    });

    test('HEAD, request lines over 4 KiB and the asterisk target on every route get error documents', async () => {
      const requests = registeredRoutes().flatMap((route) => {
        const values = route.pattern.includes('sub-dag-runs') ? fuzz.values.sub : fuzz.values.plain;
        return [request('HEAD', fillPath(route.pattern, values)), ...paramsOf(route.pattern).map((param) => request('GET', fillPath(route.pattern, { ...values, [param]: 'b'.repeat(6000) })))];
      });
      requests.push(request('GET', '*'), request('OPTIONS', '*'), request('GET', `${PREFIX}/health?${'q=1&'.repeat(3000)}`));
      const findings = await sendAll(fuzz.client, fuzz.home, requests);
      assert.ok(await fuzz.healthy());
      assert.deepEqual(findings, []);
    });

    test('malformed requests: every answer is below 500 and an error document, and /health answers after each', async () => {
      const findings: string[] = [];
      for (const raw of malformedCases(seed)) {
        const result = await exchange(fuzz.server.troupe.server.port, raw.bytes, { halfClose: raw.halfClose });
        findings.push(...answerProblems(raw.name, result, fuzz.home, false));
        if (!(await fuzz.healthy())) findings.push(`${raw.name}: /health stopped answering`);
      }
      assert.deepEqual(findings, []);
    });

    test('HTTP/1.0 is answered, pipelined requests in order, HEAD without a body, conflicting lengths refused', async () => {
      await httpConformance(fuzz);
      assert.deepEqual(fuzz.created(), []);
    });
  });
}

/** Raw protocol on uWS, inside the suite that owns the uWS server. */
export function uwsProtocolTests(seed: number, server: () => FuzzServer): void {
  test('raw protocol on uWS: malformed requests never take the server down; the answers troupe writes pass every check', async () => {
    const fuzz = server();
    const findings: string[] = [];
    for (const raw of [...malformedCases(seed), { name: 'HTTP/1.0', bytes: protocolCases.http10 }]) {
      // uWS neither answers nor closes on some garbage: the client's end closes those at once.
      const result = await exchange(fuzz.server.troupe.server.port, raw.bytes, { halfClose: true });
      findings.push(...answerProblems(raw.name, result, fuzz.home, true));
      if (!(await fuzz.healthy())) findings.push(`${raw.name}: /health stopped answering`);
    }
    assert.deepEqual(findings, []);
  });
}

/** What uWS got wrong, expected as fixed. */
export function uwsProtocolKnownDefects(server: () => FuzzServer): void {
  test('uWS: pipelined requests in order, HEAD without a body, conflicting lengths refused', async () => {
    await httpConformance(server(), { http10: false, answersSmuggling: false });
  });
}

/**
 * What any HTTP/1.1 server does. HTTP/1.0 is only required of node:http: uWS answers it with
 * its own 505 before troupe sees the request.
 */
async function httpConformance(fuzz: FuzzServer, options = { http10: true, answersSmuggling: true }): Promise<void> {
  const port = fuzz.server.troupe.server.port;
  if (options.http10) {
    const old = await exchange(port, protocolCases.http10);
    assert.equal(old.responses[0]?.status, 200, summary(old));
    assert.equal(JSON.parse(old.responses[0].body).status, 'healthy');
    await checkRaw('GET', '/health', old.responses[0]);
  }
  const pipelined = await exchange(port, protocolCases.pipelined, { expect: 2 });
  assert.deepEqual(pipelined.responses.map((response) => response.status), [200, 200], summary(pipelined));
  assert.equal(JSON.parse(pipelined.responses[0].body).status, 'healthy');
  assert.deepEqual(JSON.parse(pipelined.responses[1].body).tags, []);
  await checkRaw('GET', '/health', pipelined.responses[0]);
  await checkRaw('GET', '/dags/tags', pipelined.responses[1]);

  // The HEAD answer has no body: the next bytes on the connection are the next response.
  const head = await exchange(port, protocolCases.headThenGet, { heads: [true], expect: 2 });
  assert.equal(head.responses.length, 2, `${summary(head)} rest=${JSON.stringify(head.rest.slice(0, 120))}`);
  assert.ok(head.responses[0].status < 500);
  assert.equal(head.responses[1].status, 200);
  assert.equal(head.rest, '');
  await checkRaw('HEAD', '/health', head.responses[0]);
  await checkRaw('GET', '/dags/tags', head.responses[1]);

  // Two Content-Length values: refused, and the bytes after the shorter body never run as a request.
  // uWS has framed the bytes after the first length as a request by the time troupe refuses the
  // lengths: troupe then closes the connection unanswered, so that request never runs.
  const smuggled = await exchange(port, protocolCases.duplicateLength, { expect: 2 });
  assert.equal(smuggled.responses.length, options.answersSmuggling ? 1 : 0, summary(smuggled));
  for (const response of smuggled.responses) {
    assert.equal(response.status, 400, summary(smuggled));
    assert.deepEqual(errorDocumentProblems(asFuzzResponse(response)), []);
    await checkRaw('POST', '/dags/validate', response);
  }
  assert.ok(await fuzz.healthy());
}

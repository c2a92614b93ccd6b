// GET /api/v2/openapi.json: a valid OpenAPI 3.1 document generated from the route table, covering
// every route; and the responses of a flow through every operation match it. (Every other
// integration test's responses are checked against it too, by test/helpers.ts `call`.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import WebSocket from 'ws';
import { apiRouter, buildOpenApiDocument, openApiPath, takesRemoteNode } from '../src/http/index.ts';
import { HELLO, startTestServer, type TestServer } from './helpers.ts';
import { assertDocumented, assertDocumentedAt, checkedFetch, uncheckedFetch, checkedResponses, OpenApiChecker, openApiChecker } from './openapi-check.ts';
import { browse, CookieJar, documented, signInAtProvider, startTestProvider } from './support/oidc-provider.ts';
import { freePort } from './support/ports.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const OIDC_DEFAULTS = { scopes: ['openid', 'email'], whitelist: [], allowedDomains: [], autoSignup: true, defaultRole: 'viewer' as const };

describe('the OpenAPI document', () => {
  let server: TestServer;
  let served: any;
  before(async () => {
    server = await startTestServer('uws');
    const response = await server.call('GET', '/openapi.json');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    served = response.body;
  });
  after(() => server.close());

  test('is a valid OpenAPI 3.1 document, served as this build generates it', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(served));
    assert.deepEqual(result, { valid: true });
    assert.equal(validator.version, '3.1');
    assert.equal(served.openapi, '3.1.0');
    assert.deepEqual(served, await buildOpenApiDocument(apiRouter().entries(), served.info.version));
  });

  test('every schema it holds compiles as JSON Schema 2020-12 in ajv strict mode', () => {
    const checker = new OpenApiChecker(served);
    const pointers = [
      ...Object.keys(served.components.schemas).map((name) => `#/components/schemas/${name}`),
      ...Object.keys(served.components.responses).map((name) => `#/components/responses/${name}/content/application~1json/schema`),
    ];
    for (const [path, item] of Object.entries<any>(served.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const base = `#/paths/${path.replace(/\//g, '~1')}/${method}`;
        for (const [index, parameter] of (operation.parameters ?? []).entries()) pointers.push(`${base}/parameters/${index}/schema`);
        if (operation.requestBody) pointers.push(`${base}/requestBody/content/application~1json/schema`);
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          for (const mediaType of Object.keys(response.content ?? {})) pointers.push(`${base}/responses/${status}/content/${mediaType.replace(/\//g, '~1')}/schema`);
        }
      }
    }
    for (const pointer of pointers) assert.doesNotThrow(() => checker.compile(pointer), pointer);
    assert.ok(pointers.length > 100, `${pointers.length} schemas`);
  });

  test('covers every route: its path and query parameters, body, success and error responses', () => {
    const routes = apiRouter().entries();
    const undocumented = routes.filter((route) => !route.doc).map((route) => `${route.method} ${route.pattern}`);
    assert.deepEqual(undocumented, [], 'routes without a RouteDoc (router.add(..., doc))');
    const operationIds = new Set<string>();
    for (const route of routes) {
      const operation = served.paths[openApiPath(route.pattern)]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.pattern} is in the document`);
      assert.ok(!operationIds.has(operation.operationId), `operationId ${operation.operationId} is unique`);
      operationIds.add(operation.operationId);
      const pathParameters = [...route.pattern.matchAll(/:(\w+)/g)].map(([, name]) => name);
      assert.deepEqual(operation.parameters?.filter((p: any) => p.in === 'path').map((p: any) => p.name) ?? [], pathParameters);
      const remoteNode = takesRemoteNode(route.pattern) ? ['remoteNode'] : [];
      assert.deepEqual(operation.parameters?.filter((p: any) => p.in === 'query').map((p: any) => p.name) ?? [], [...route.doc!.query?.map((q) => q.name) ?? [], ...remoteNode]);
      assert.equal(operation.requestBody !== undefined, route.doc!.body !== undefined);
      const headers = operation.parameters?.filter((p: any) => p.in === 'header').map((p: any) => p.name) ?? [];
      assert.deepEqual(headers, route.idempotent ? ['Idempotency-Key'] : [], `${route.method} ${route.pattern} header parameters`);
      const statuses = Object.keys(operation.responses).map(Number);
      // A redirect is the success of a route that redirects (the OIDC login); switching protocols
      // (101) that of a WebSocket (GET /events/ws).
      assert.ok(statuses.some((status) => (status >= 200 && status < 400) || status === 101), `${route.method} ${route.pattern} has a success response`);
      assert.ok(statuses.includes(500), `${route.method} ${route.pattern} lists 500`);
    }
    assert.deepEqual(routes.filter((route) => route.idempotent).map((route) => `${route.method} ${route.pattern}`).sort(), [
      'POST /dag-runs', 'POST /dag-runs/enqueue', 'POST /dags/:fileName/enqueue', 'POST /dags/:fileName/start', 'POST /dags/:fileName/start-sync',
    ], 'the submits that honour Idempotency-Key');
    const documented = Object.values<any>(served.paths).flatMap((item) => Object.keys(item).filter((key) => METHODS.includes(key)));
    assert.equal(documented.length, routes.length, 'the document has no operation the router lacks');
  });

  test('a response that drifts fails, naming the route, the status and the schema path', async () => {
    const checker = await openApiChecker();
    const extraField = checker.match({ method: 'GET', path: '/dag-runs/a/b/outputs', status: 200, contentType: 'application/json', text: JSON.stringify({ metadata: { dagName: 'a', dagRunId: 'b', attemptId: 'c', status: 'succeeded', completedAt: '', params: '{}' }, outputs: {}, extra: 1 }) })!;
    assert.deepEqual(checker.problems(extraField), [
      'GET /dag-runs/{name}/{dagRunId}/outputs answered 200: body must NOT have additional properties {"additionalProperty":"extra"} ' +
        '(schema #/paths/~1dag-runs~1{name}~1{dagRunId}~1outputs/get/responses/200/content/application~1json/schema/additionalProperties)',
    ]);
    const wrongType = checker.match({ method: 'GET', path: '/dag-runs/a/latest', status: 200, contentType: 'application/json', text: JSON.stringify({ dagRun: null }) })!;
    assert.match(checker.problems(wrongType).join('\n'), /GET \/dag-runs\/\{name\}\/\{dagRunId\} answered 200: body\/dagRun must be object .*\(schema #\/components\/schemas\/DAGRunDetails\/type\)/);
    const wrongCode = checker.match({ method: 'POST', path: '/dags/x/start', status: 404, contentType: 'application/json', text: '{"code":"not_running","message":"m"}' })!;
    assert.match(checker.problems(wrongCode)[0], /POST \/dags\/\{fileName\}\/start answered 404: body\/code must be equal to one of the allowed values \{"allowedValues":\["not_found"\]\}/);
    const unlisted = checker.match({ method: 'GET', path: '/dags/tags', status: 409, contentType: 'application/json', text: '{"code":"already_exists","message":"m"}' })!;
    assert.match(checker.problems(unlisted)[0], /GET \/dags\/tags answered 409, a status the document does not list for it/);
    const bodyless = checker.match({ method: 'POST', path: '/dag-runs/a/b/stop', status: 200, contentType: 'application/json', text: '{}' })!;
    assert.match(checker.problems(bodyless)[0], /where the document says it has none/);
  });
});

/** A DAG calling HELLO-like child, for the sub DAG run routes. */
const PARENT = 'steps:\n  - name: call\n    call: oa-child\n    params: "NAME=sub"\n';

describe('every operation answers as the document says', () => {
  let server: TestServer;
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'troupe-openapi-'));
    server = await startTestServer('node', { queues: [{ name: 'oa-custom', maxConcurrency: 1 }] });
  });
  after(async () => {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  // Each call below is checked against the document by `call` itself; this suite adds the routes
  // and statuses no other suite reaches and, at the end, that every operation answered.
  test('DAG definitions', async () => {
    const { call } = server;
    assert.equal((await call('GET', '/health')).status, 200);
    assert.deepEqual((await call('GET', '/workers')).body, { workers: [], errors: [] });
    assert.equal((await call('POST', '/dags', { name: 'oa-hello', spec: HELLO })).status, 201);
    assert.equal((await call('POST', '/dags', { name: 'oa-hello' })).status, 409);
    assert.equal((await call('POST', '/dags', { name: 'bad name!' })).status, 400);
    assert.equal((await call('POST', '/dags', { spec: 1 })).status, 400);
    assert.equal((await call('POST', '/dags', { name: 'oa-child', spec: HELLO })).status, 201);
    assert.equal((await call('POST', '/dags', { name: 'oa-parent', spec: PARENT })).status, 201);
    await writeFile(join(server.home, 'dags', 'oa-broken.yaml'), 'steps: [');
    assert.equal((await call('POST', '/dags/validate', { spec: HELLO, name: 'oa-hello' })).body.valid, true);
    assert.equal((await call('POST', '/dags/validate', { spec: 'steps: [' })).body.valid, false);
    assert.equal((await call('POST', '/dags/validate', {})).body.valid, false);
    const listed = await call('GET', '/dags?perPage=2&page=2&sort=nextRun&order=desc');
    assert.equal(listed.status, 200);
    assert.equal((await call('GET', '/dags?perPage=0')).status, 400);
    assert.equal((await call('GET', '/dags?order=up')).status, 400);
    assert.equal((await call('GET', '/dags/search?q=hello')).body.results.length > 0, true);
    assert.equal((await call('GET', '/dags/search')).status, 400);
    assert.deepEqual((await call('GET', '/dags/tags')).body.tags, ['X', 'demo']);
    assert.equal((await call('GET', '/dags/oa-hello')).body.latestDAGRun.statusLabel, 'not_started');
    assert.equal((await call('GET', '/dags/oa-broken')).status, 200);
    assert.equal((await call('GET', '/dags/oa-nope')).status, 404);
    assert.equal((await call('GET', '/dags/oa-broken/spec')).status, 200);
    assert.equal((await call('GET', '/dags/oa-hello/spec')).status, 200);
    assert.deepEqual((await call('PUT', '/dags/oa-hello/spec', { spec: HELLO })).body, { errors: [] });
    assert.ok((await call('PUT', '/dags/oa-hello/spec', { spec: 'steps: 3' })).body.errors.length > 0);
    assert.equal((await call('PUT', '/dags/oa-nope/spec', { spec: HELLO })).status, 404);
    assert.equal((await call('POST', '/dags/oa-hello/suspend', { suspend: 'yes' })).status, 400);
    assert.equal((await call('POST', '/dags', { name: 'oa-gone' })).status, 201);
    assert.equal((await call('POST', '/dags/oa-gone/rename', { newFileName: 'oa-hello' })).status, 409);
    assert.equal((await call('POST', '/dags/oa-gone/rename', { newFileName: 'oa-gone2' })).status, 200);
    assert.equal((await call('DELETE', '/dags/oa-gone2')).status, 204);
    assert.equal((await call('DELETE', '/dags/oa-gone2')).status, 404);
  });

  test('runs, their logs, outputs, sub DAG runs and step status', async () => {
    const { call } = server;
    const started = await call('POST', '/dags/oa-hello/start', { params: '{"NAME":"api"}' });
    assert.equal(started.status, 200);
    const id = started.body.dagRunId;
    await server.waitForRun('oa-hello', id);
    assert.equal((await call('POST', '/dags/oa-hello/start', { dagRunId: id })).status, 409);
    assert.equal((await call('POST', '/dags/oa-nope/start', {})).status, 404);
    assert.equal((await call('GET', '/dags/oa-hello')).body.latestDAGRun.dagRunId, id);
    assert.equal((await call('GET', '/dags/oa-hello/dag-runs')).body.dagRuns.length, 1);
    assert.equal((await call('GET', `/dags/oa-hello/dag-runs/${id}`)).status, 200);
    assert.equal((await call('POST', '/dags/oa-hello/stop-all')).status, 200);
    assert.equal((await call('GET', '/dag-runs?name=oa-hello&status=4&fromDate=0')).body.dagRuns.length, 1);
    assert.equal((await call('GET', '/dag-runs?status=9')).status, 400);
    assert.equal((await call('GET', `/dag-runs/oa-hello?dagRunId=${id}`)).body.dagRuns.length, 1);
    assert.equal((await call('GET', '/dag-runs/oa-hello/latest')).body.dagRun.dagRunId, id);
    assert.equal((await call('GET', '/dag-runs/oa-hello/nope')).status, 404);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/spec`)).body.spec, HELLO);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/outputs`)).body.outputs.greeting, 'hello api');
    assert.equal((await call('POST', `/dag-runs/oa-hello/${id}/stop`)).status, 400);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/log?tail=2`)).status, 200);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/steps/s2/log?stream=stderr`)).body.content, 'oops');
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/steps/s2/log?stream=both`)).status, 400);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/steps/nope/log`)).status, 404);
    // The step has ended: its log stream sends what is there, then its end.
    assert.match((await call('GET', `/dag-runs/oa-hello/${id}/steps/s2/log/stream?stream=stderr`)).text, /data: oops\n\nevent: end\n/);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${id}/steps/nope/log/stream`)).status, 404);
    assert.equal((await call('PATCH', `/dag-runs/oa-hello/${id}/steps/s2/status`, { status: 2 })).status, 200);
    assert.equal((await call('PATCH', `/dag-runs/oa-hello/${id}/steps/s2/status`, { status: 9 })).status, 400);
    assert.equal((await call('POST', `/dag-runs/oa-hello/${id}/retry`, {})).status, 200);
    await server.waitForRun('oa-hello', id);
    assert.equal((await call('POST', `/dag-runs/oa-hello/${id}/retry`, { dagRunId: 'latest' })).status, 400);

    const sleeper = await call('POST', '/dag-runs', { spec: 'steps:\n  - name: wait\n    command: sleep 60\n', name: 'oa-sleeper' });
    await server.waitForRun('oa-sleeper', sleeper.body.dagRunId, (run) => run.status === 1);
    assert.equal((await call('POST', `/dag-runs/oa-sleeper/${sleeper.body.dagRunId}/retry`, {})).status, 400);
    assert.equal((await call('POST', `/dag-runs/oa-sleeper/${sleeper.body.dagRunId}/stop`)).status, 200);
    assert.equal((await server.waitForRun('oa-sleeper', sleeper.body.dagRunId)).statusLabel, 'aborted');
    assert.equal((await call('POST', '/dag-runs/cleanup', { retentionDays: 0, name: 'oa-sleeper', dryRun: true })).body.dagRuns.length, 1);
    assert.equal((await call('POST', '/dag-runs/cleanup', { retentionDays: 0, name: 'oa-sleeper' })).body.removed, 1);
    assert.equal((await call('POST', '/dag-runs/cleanup', { retentionDays: -1 })).status, 400);

    const inline = await call('POST', '/dag-runs', { spec: HELLO, name: 'oa-inline' });
    assert.equal(inline.status, 200);
    await server.waitForRun('oa-inline', inline.body.dagRunId);
    assert.equal((await call('POST', '/dag-runs', {})).status, 400);

    const parent = (await server.startAndWait('oa-parent')).dagRunId;
    const subRuns = (await call('GET', `/dag-runs/oa-parent/${parent}/sub-dag-runs`)).body.subRuns;
    assert.equal(subRuns.length, 1);
    const sub = `/dag-runs/oa-parent/${parent}/sub-dag-runs/${subRuns[0].dagRunId}`;
    assert.equal((await call('GET', sub)).body.dagRunDetails.name, 'oa-child');
    assert.equal((await call('GET', `${sub}/log`)).status, 200);
    assert.equal((await call('GET', `${sub}/steps/s1/log`)).body.content, 'hello sub');
    assert.match((await call('GET', `${sub}/steps/s1/log/stream`)).text, /data: hello sub\n/);
    assert.equal((await call('PATCH', `${sub}/steps/s1/status`, { status: 4 })).status, 200);
    assert.equal((await call('GET', `/dag-runs/oa-parent/${parent}/sub-dag-runs/nope`)).status, 404);
  });

  test('queues: enqueue, the listing, dequeue, reschedule and a custom queue\'s limit', async () => {
    const { call } = server;
    // Queued runs of a suspended DAG wait, so each can be seen in its queue and dequeued.
    assert.equal((await call('POST', '/dags/oa-hello/suspend', { suspend: true })).status, 200);
    const queued = await call('POST', '/dags/oa-hello/enqueue', { queue: 'oa-custom' });
    assert.equal(queued.status, 200);
    const listed = (await call('GET', '/queues')).body.queues.find((queue: any) => queue.name === 'oa-custom');
    assert.deepEqual(listed.queuedDAGRuns.map((run: any) => [run.dagRunId, run.waitingFor]), [[queued.body.dagRunId, 'suspended']]);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${queued.body.dagRunId}/dequeue`)).status, 200);
    assert.equal((await call('GET', `/dag-runs/oa-hello/${queued.body.dagRunId}/dequeue`)).status, 404);
    assert.equal((await call('POST', '/dags/oa-hello/suspend', { suspend: false })).status, 200);
    const inline = await call('POST', '/dag-runs/enqueue', { spec: HELLO, name: 'oa-inline-queued' });
    assert.equal(inline.status, 200);
    await server.waitForRun('oa-inline-queued', inline.body.dagRunId);
    const rescheduled = await call('POST', `/dag-runs/oa-inline-queued/${inline.body.dagRunId}/reschedule`, {});
    assert.equal(rescheduled.status, 200);
    await server.waitForRun('oa-inline-queued', rescheduled.body.dagRunId);
    assert.equal((await call('PATCH', '/queues/oa-custom', { maxConcurrency: 2 })).body.maxConcurrency, 2);
    assert.equal((await call('PATCH', '/queues/oa-nope', { maxConcurrency: 2 })).status, 404);
    assert.equal((await call('PATCH', '/queues/oa-custom', { maxConcurrency: 0 })).status, 400);
  });

  test('monitoring: the metrics and the resource history', async () => {
    const { call } = server;
    const metrics = await call('GET', '/metrics');
    assert.match(metrics.text, /troupe_info/);
    assert.ok(Array.isArray((await call('GET', '/services/resources/history?duration=30m')).body.cpu));
    assert.equal((await call('GET', '/services/resources/history?duration=soon')).status, 400);
    assert.equal((await call('POST', '/dags', { name: 'oa-sync', spec: 'steps:\n  - echo synced\n' })).status, 201);
    const synced = await call('POST', '/dags/oa-sync/start-sync', { timeout: 60 });
    assert.equal(synced.status, 200);
    assert.equal(synced.body.dagRun.status, 4);
    assert.equal((await call('POST', '/dags/oa-sync/start-sync', {})).status, 400);
    // A stream never ends by itself: its first chunk is what is checked.
    const abort = new AbortController();
    const stream = await uncheckedFetch('an event stream never ends: its first chunk is checked below', `${server.base}/events?since=0`, { signal: abort.signal });
    const first = await stream.body!.getReader().read();
    abort.abort();
    await assertDocumentedAt('GET', `${server.base}/events`, { status: stream.status, contentType: stream.headers.get('content-type'), text: Buffer.from(first.value!).toString() });
    assert.equal((await call('GET', '/events?types=nothing')).status, 400);
    // The event WebSocket's handshake: its 101 is the operation's success.
    const socket = new WebSocket(`${server.base.replace(/^http/, 'ws')}/events/ws`);
    const upgraded = await new Promise<IncomingMessage>((resolve, reject) => {
      socket.once('upgrade', resolve);
      socket.once('error', reject);
    });
    await assertDocumented({ method: 'GET', path: '/events/ws', status: upgraded.statusCode!, contentType: null, text: '' });
    socket.terminate();
  });

  test('accounts: users, sign-in, the caller, API keys (authentication off: everything is served)', async () => {
    const { call } = server;
    const created = await call('POST', '/users', { username: 'oa-user', password: 'oa-password-1', role: 'viewer' });
    assert.equal(created.status, 201);
    const id = created.body.user.id;
    assert.equal((await call('POST', '/users', { username: 'oa-user', password: 'oa-password-1', role: 'viewer' })).status, 409);
    assert.equal((await call('POST', '/users', { username: 'oa-weak', password: 'short', role: 'viewer' })).status, 400);
    assert.equal((await call('GET', '/users')).body.users.length, 1);
    assert.equal((await call('GET', `/users/${id}`)).body.user.username, 'oa-user');
    assert.equal((await call('GET', '/users/nope')).status, 404);
    assert.equal((await call('PATCH', `/users/${id}`, { role: 'operator' })).body.user.role, 'operator');
    assert.equal((await call('POST', `/users/${id}/reset-password`, { newPassword: 'oa-password-2' })).status, 200);
    const login = await call('POST', '/auth/login', { username: 'oa-user', password: 'oa-password-2' });
    assert.equal(login.status, 200);
    assert.equal((await call('POST', '/auth/logout', {})).status, 200);
    assert.equal((await call('GET', '/auth/methods')).body.required, false);
    assert.equal((await call('POST', '/auth/login', { username: 'oa-user', password: 'wrong-password' })).status, 401);
    assert.equal((await call('GET', '/auth/me')).body.user.role, 'admin');
    assert.equal((await call('POST', '/auth/change-password', { currentPassword: 'x', newPassword: 'oa-password-3' })).status, 400);
    const key = await call('POST', '/api-keys', { name: 'oa-key', role: 'viewer' });
    assert.equal(key.status, 201);
    assert.equal((await call('GET', '/api-keys')).body.apiKeys.length, 1);
    assert.equal((await call('GET', `/api-keys/${key.body.apiKey.id}`)).body.apiKey.name, 'oa-key');
    assert.equal((await call('PATCH', `/api-keys/${key.body.apiKey.id}`, { description: 'd' })).body.apiKey.description, 'd');
    assert.equal((await call('DELETE', `/api-keys/${key.body.apiKey.id}`)).status, 204);
    assert.equal((await call('DELETE', `/users/${id}`)).status, 204);
    // Changing one's own password needs a signed-in user: a server with builtin authentication.
    const secured = await startTestServer('node', { auth: { mode: 'builtin', admin: { username: 'oa-admin', password: 'oa-password-1' } } });
    try {
      const session = await checkedFetch(`${secured.base}/auth/login`, { method: 'POST', body: JSON.stringify({ username: 'oa-admin', password: 'oa-password-1' }) });
      const { token } = await session.json() as { token: string };
      const changed = await checkedFetch(`${secured.base}/auth/change-password`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ currentPassword: 'oa-password-1', newPassword: 'oa-password-2' }),
      });
      assert.equal(changed.status, 200);
    } finally {
      await secured.close();
    }
  });

  test('OIDC: the login and its callback, with an in-process provider', async () => {
    const port = await freePort();
    const callbackUrl = `http://127.0.0.1:${port}/api/v2/auth/oidc/callback`;
    const provider = await startTestProvider(callbackUrl, { alice: { email: 'alice@example.com' } });
    const secured = await startTestServer('node', {
      port, auth: { mode: 'oidc' },
      oidc: { ...OIDC_DEFAULTS, clientId: provider.clientId, clientSecret: provider.clientSecret, clientUrl: `http://127.0.0.1:${port}`, issuer: provider.issuer },
    });
    try {
      const jar = new CookieJar();
      const begun = await documented(await browse(jar, `${secured.base}/auth/oidc/login`));
      assert.equal(begun.response.status, 302);
      const callback = await signInAtProvider(jar, begun.response.headers.get('location')!, 'alice', callbackUrl);
      assert.equal((await documented(await browse(jar, callback))).response.status, 302);
      assert.equal((await documented(await browse(jar, callback))).response.status, 401);
    } finally {
      await secured.close();
      await provider.close();
    }
  });

  test('every operation of the document answered at least once with success', async () => {
    const document = (await openApiChecker()).document;
    const succeeded = new Set(checkedResponses.filter((response) => response.status < 400).map((response) => `${response.operation} ${response.route}`));
    const missing = Object.entries<any>(document.paths)
      .flatMap(([path, item]) => Object.keys(item).filter((method) => METHODS.includes(method)).map((method) => `${method} ${path}`))
      .filter((operation) => !succeeded.has(operation));
    assert.deepEqual(missing, []);
  });
});

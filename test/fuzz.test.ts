// The fuzz suite: thousands of hostile requests over every route, on loopback, from a
// fixed seed. Every answer must be below 500, every error the JSON error document, no body may
// carry a stack trace or a server path, no file may appear outside the home, and /health must
// answer after each group. TROUPE_FUZZ_SEED=<integer> replays or varies the generated part.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fuzzSeed, sendAll, type FuzzRequest } from './fuzz/harness.ts';
import {
  HOSTILE_SEGMENTS, METHODS, PREFIX, fillPath, generatedSegment, PARAMS, heavyBodies, invalidBody, jsonBody, shapedBody,
  paramsOf, queryString, refusedParams, registeredRoutes, request, type Route,
} from './fuzz/corpus.ts';
import { hostileYaml, runnableSpec, structuredSpec } from './fuzz/yaml-corpus.ts';
import { startFuzzServer, type FuzzServer } from './fuzz/fixtures.ts';
import { nodeProtocolGroup, uwsProtocolKnownDefects, uwsProtocolTests } from './fuzz/protocol-groups.ts';
import { knownDefectTests } from './fuzz/known-defect-groups.ts';

const seed = fuzzSeed();
console.log(`# fuzz seed ${seed} (set TROUPE_FUZZ_SEED to replay another)`);

/** Each group draws from its own stream, so adding a group does not change what the others send. */
const sample = <T>(arbitrary: fc.Arbitrary<T>, group: number, count: number): T[] => fc.sample(arbitrary, { seed: seed + group * 7919, numRuns: count });

const routes = registeredRoutes();
const valuesFor = (fuzz: FuzzServer, pattern: string) => (pattern.includes(':subDagRunId') || pattern.includes('sub-dag-runs') ? fuzz.values.sub : fuzz.values.plain);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Sends a group, then demands liveness and no findings; the message lists what failed, request by request. */
async function run(fuzz: FuzzServer, requests: FuzzRequest[], expect?: Parameters<typeof sendAll>[3]): Promise<void> {
  const findings = await sendAll(fuzz.client, fuzz.home, requests, expect);
  await fuzz.restore();
  assert.ok(await fuzz.healthy(), '/health stopped answering 200 healthy');
  assert.deepEqual(findings.slice(0, 40), [], `${findings.length} of ${requests.length} requests failed (seed ${seed})`);
}

describe('fuzz: every route on the uWS carrier', () => {
  let fuzz: FuzzServer;
  // Stands in for a remote node: records the path of every request that reaches it.
  let remote: Server;
  const reachedRemote: string[] = [];
  before(async () => {
    remote = createServer((req, res) => {
      reachedRemote.push(req.url ?? '');
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not_found","message":"recorded"}');
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const apiBaseURL = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/api/v2`;
    fuzz = await startFuzzServer('uws', { remoteNodes: [{ name: 'fxremote', apiBaseURL }] });
  });
  after(async () => {
    remote?.closeAllConnections();
    remote?.close();
    const statuses = [...fuzz.client.statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(', ');
    console.log(`# fuzz sent ${fuzz.client.sent} requests on uws (${statuses})`);
    await fuzz.close();
  });

  test('the route list covers the specification and the registration', () => {
    assert.ok(routes.length >= 30, `only ${routes.length} routes registered`);
    assert.ok(routes.some((route) => route.pattern.includes(':subDagRunId')));
  });

  test('hostile path parameters on every route', async () => {
    const requests: FuzzRequest[] = [];
    const segments = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) }, { weight: 1, arbitrary: generatedSegment });
    routes.forEach((route, index) => {
      for (const param of paramsOf(route.pattern)) {
        for (const segment of sample(segments, 100 + index * 10 + param.length, 8)) {
          requests.push(request(route.method, fillPath(route.pattern, { ...valuesFor(fuzz, route.pattern), [param]: segment }), BODY_METHODS.has(route.method) ? '{}' : undefined));
        }
      }
    });
    // Every listed segment in every kind of parameter at least once.
    for (const param of ['fileName', 'name', 'dagRunId', 'stepName', 'subDagRunId']) {
      const route = routes.find((candidate) => candidate.method === 'GET' && paramsOf(candidate.pattern).includes(param))!;
      for (const segment of HOSTILE_SEGMENTS) requests.push(request('GET', fillPath(route.pattern, { ...valuesFor(fuzz, route.pattern), [param]: segment })));
    }
    await run(fuzz, requests);
  });

  test('every method on every route', async () => {
    const requests = routes.flatMap((route) => METHODS.map((method) =>
      request(method, fillPath(route.pattern, valuesFor(fuzz, route.pattern)), BODY_METHODS.has(method.toUpperCase()) ? '{}' : undefined)));
    await run(fuzz, requests);
  });

  test('bodies of the wrong shape, invalid JSON, huge and deeply nested', async () => {
    await fuzz.server.writeDag('fxparams', 'maxActiveRuns: -1\nsteps:\n  - "true"\n');
    const bodyRoutes = routes.filter((route) => BODY_METHODS.has(route.method));
    const requests: FuzzRequest[] = [];
    bodyRoutes.forEach((route, index) => {
      const path = fillPath(route.pattern, valuesFor(fuzz, route.pattern));
      for (const body of sample(jsonBody, 200 + index, 24)) requests.push(request(route.method, path, body));
      for (const body of sample(shapedBody, 250 + index, 16)) requests.push(request(route.method, path, body));
      for (const body of sample(invalidBody, 300 + index, 8)) requests.push(request(route.method, path, body));
      requests.push(request(route.method, path, '{"name":"x"}', { 'content-type': 'text/plain' }));
      requests.push(request(route.method, path, Buffer.from('{"spec":"steps: [true]"}', 'utf16le'), { 'content-type': 'application/json; charset=utf-16' }));
    });
    for (const pattern of ['/dags', '/dags/validate', '/dag-runs', '/dags/:fileName/spec']) {
      const route = bodyRoutes.find((candidate) => candidate.pattern === pattern)!;
      for (const body of heavyBodies()) requests.push(request(route.method, fillPath(pattern, fuzz.values.plain), body));
    }
    // Every params text through both ways of starting a run (the schema passes them all to the engine).
    for (const params of PARAMS) {
      requests.push(request('POST', `${PREFIX}/dags/fxparams/start`, JSON.stringify({ params })));
      requests.push(request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ params, name: 'inlparams', spec: 'maxActiveRuns: -1\nsteps:\n  - "true"\n' })));
    }
    // A body where none is expected.
    for (const route of routes.filter((candidate) => candidate.method === 'GET').slice(0, 8)) {
      requests.push(request('GET', fillPath(route.pattern, valuesFor(fuzz, route.pattern)), '{"x":'));
    }
    await run(fuzz, requests);
  });

  test('reserved and non-variable param names: 400 bad_request on every route that takes params, never a run', async () => {
    await fuzz.server.writeDag('fxnames', 'maxActiveRuns: -1\nsteps:\n  - "true"\n');
    const spec = 'maxActiveRuns: -1\nsteps:\n  - "true"\n';
    const requests = sample(refusedParams, 800, 60).flatMap((params) => [
      request('POST', `${PREFIX}/dags/fxnames/start`, JSON.stringify({ params })),
      request('POST', `${PREFIX}/dags/fxnames/enqueue`, JSON.stringify({ params })),
      request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ params, name: 'inlnames', spec })),
      request('POST', `${PREFIX}/dag-runs/enqueue`, JSON.stringify({ params, name: 'inlnames', spec })),
    ]);
    await run(fuzz, requests, (_req, res) => (res.status === 400 && res.text.includes('"bad_request"') && res.text.includes('params refused') ? [] : ['expected 400 bad_request refusing the params']));
    for (const name of ['fxnames', 'inlnames']) {
      assert.equal((await fuzz.server.call('GET', `/dag-runs/${name}`)).body.dagRuns.length, 0, `${name}: a refused request records no run`);
    }
  });

  test('query strings on every route that reads one', async () => {
    const requests: FuzzRequest[] = [];
    routes.filter((route) => route.method === 'GET').forEach((route, index) => {
      const path = fillPath(route.pattern, valuesFor(fuzz, route.pattern));
      for (const query of sample(queryString, 400 + index, 14)) requests.push(request('GET', `${path}?${query}`));
    });
    await run(fuzz, requests);
  });

  test('paths outside the routes: traversal, encodings, slashes, length', async () => {
    const fixed = ['/', '', '/api', '/api/v2', '/api/v2/', '/api/v2//health', '/api/v2/health/', '/api/v2/./health', '/api/v2/../v2/health',
      '/api/v2/%2e%2e/v2/health', '/api/v2/dags/%2e%2e%2f%2e%2e%2fetc', '/api/v2/dags/fx%2fspec', '/api/v2/dags//spec', '/API/V2/HEALTH',
      '/api/v1/dags', '/api/v2/dags/fx/spec/extra/more', `/api/v2/${'a/'.repeat(500)}`, '/api/v2/health?', '/api/v2/health#x', '/..', '/%']
      .map((path) => path === '' ? '/' : path);
    const generated = sample(fc.array(generatedSegment, { minLength: 1, maxLength: 6 }), 500, 120).map((segments) => `${PREFIX}/${segments.join('/')}`);
    const requests = [...fixed, ...generated].flatMap((path) => [request('GET', path), request('POST', path, '{}')]);
    await run(fuzz, requests);
  });

  test('remoteNode: dot segments, encoded and doubled slashes never leave the node\'s apiBaseURL nor reach its local-only routes', async () => {
    reachedRemote.length = 0;
    const dots = ['..', '.', '%2e%2e', '%2E%2E', '.%2e', '%2e.', '%2e', '..%2f..', '%2f', '%5c..%5c..', '\\..', '', '%75sers', 'users', 'api-keys', '%61pi-keys', 'auth', 'x#'];
    const segment = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...dots) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) }, { weight: 1, arbitrary: generatedSegment });
    // Request lines stay under 4 KiB, which uWS answers itself (the protocol groups send longer ones).
    const paths = sample(fc.array(segment, { minLength: 1, maxLength: 6 }), 550, 400).map((segments) => `${PREFIX}/${segments.join('/')}`)
      .filter((path) => path.length < 3500);
    const fixed = ['/dags/../users', '/x/../api-keys', '/../../../../etc/passwd', '/dags/%2e%2e/%2e%2e/users', '//users', '/dags//../api-keys', '/dags/.%2e/auth/login']
      .map((path) => `${PREFIX}${path}`);
    const requests = [...fixed, ...paths].flatMap((path) => [request('GET', `${path}?remoteNode=fxremote`), request('POST', `${path}?x=1&remoteNode=fxremote`, '{}')]);
    await run(fuzz, requests);
    const localOnly = new Set(['health', 'metrics', 'openapi.json', 'auth', 'users', 'api-keys']);
    const escaped = reachedRemote.filter((url) => {
      const path = url.split('?')[0];
      // What any URL parser on the node's side reads: no dot segment resolved away, no backslash turned into a slash.
      const parsed = new URL(path, 'http://node.invalid').pathname;
      const segments = path.split('/').slice(3);
      let first = segments[0] ?? '';
      try {
        first = decodeURIComponent(first);
      } catch { /* malformed: left as sent */ }
      return !path.startsWith('/api/v2/') || parsed !== path || path.includes('//') || localOnly.has(first);
    });
    assert.deepEqual(escaped.slice(0, 20), [], `${escaped.length} of ${reachedRemote.length} forwarded paths left the node's API or reached a local-only route`);
  });

  test('YAML definitions through validate, create, edit and inline runs', async () => {
    const requests: FuzzRequest[] = [];
    const specs = [...hostileYaml(), ...sample(structuredSpec, 600, 150)];
    specs.forEach((spec, index) => {
      const body = (extra: Record<string, unknown> = {}) => JSON.stringify({ spec, ...extra });
      requests.push(request('POST', `${PREFIX}/dags/validate`, body()));
      if (index % 3 === 0) requests.push(request('POST', `${PREFIX}/dags/validate`, body({ name: `v${index}` })));
      requests.push(request('POST', `${PREFIX}/dags`, body({ name: `yz${index}` })), request('GET', `${PREFIX}/dags/yz${index}`));
      requests.push(request('GET', `${PREFIX}/dags/yz${index}/spec`), request('DELETE', `${PREFIX}/dags/yz${index}`));
      if (index % 2 === 0) requests.push(request('PUT', `${PREFIX}/dags/fxedit/spec`, body()), request('GET', `${PREFIX}/dags/fxedit`));
    });
    // Only inert specs are started: no hostile logDir, workingDir, dotenv or secret file is created or read.
    const startable = [...hostileYaml().filter((spec) => !/logDir|workingDir|dotenv|secrets|call:/.test(spec)), ...sample(runnableSpec, 700, 30)];
    startable.forEach((spec, index) => requests.push(request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ spec, name: `inl${index % 5}` }))));
    requests.push(request('GET', `${PREFIX}/dags`), request('GET', `${PREFIX}/dags/tags`), request('GET', `${PREFIX}/dags/search?q=a`), request('GET', `${PREFIX}/dag-runs`));
    await fuzz.server.writeDag('fxedit', 'steps:\n  - "true"\n');
    await run(fuzz, requests);
  });

  test('a DAG that calls itself through stored files ends its run instead of taking the server down', async () => {
    await fuzz.server.writeDag('cyc-a', 'steps:\n  - call: cyc-b\n');
    await fuzz.server.writeDag('cyc-b', 'steps:\n  - call: cyc-a\n');
    const started = await fuzz.server.call('POST', '/dags/cyc-a/start', {});
    assert.ok(started.status < 500, started.text);
    if (started.status === 200) await fuzz.server.waitForRun('cyc-a', started.body.dagRunId);
    await run(fuzz, [request('GET', `${PREFIX}/dag-runs/cyc-a/latest`), request('GET', `${PREFIX}/dags/cyc-a`), request('POST', `${PREFIX}/dags/validate`, JSON.stringify({ spec: 'steps:\n  - call: cyc-a\n' }))]);
  });

  uwsProtocolTests(seed, () => fuzz);

  knownDefectTests(() => fuzz);
  uwsProtocolKnownDefects(() => fuzz);

  test('no file appeared outside the home, and the server still answers', async () => {
    assert.ok(await fuzz.healthy());
    assert.deepEqual(fuzz.created(), []);
  });
});

nodeProtocolGroup(seed);

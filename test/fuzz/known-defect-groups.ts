// Fuzz groups for known defects of the HTTP and definition layers, each expecting the fixed behaviour.
// They are apart and named "known defect N" (the item's number) so that a failure is read for
// what it is: the item's fix is missing or incomplete.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { sendAll, type FuzzRequest, type FuzzResponse } from './harness.ts';
import { PREFIX, PROTOTYPE_NAMES, fillPath, paramsOf, registeredRoutes, request } from './corpus.ts';
import { EMPTY_SPECS, aliasBombs, nulPaths, ordinaryAliases } from './yaml-corpus.ts';
import type { FuzzServer } from './fixtures.ts';

const json = (res: FuzzResponse): any => {
  try {
    return JSON.parse(res.text);
  } catch {
    return undefined;
  }
};

/** The same spec through validate (200, valid false), create and inline runs (400), and edit (200 with errors, or 400). */
function refusedEverywhere(specs: string[], tag: string): { requests: FuzzRequest[]; expect: (req: FuzzRequest, res: FuzzResponse) => string[] } {
  const requests = specs.flatMap((spec, index) => [
    request('POST', `${PREFIX}/dags/validate`, JSON.stringify({ spec })),
    request('POST', `${PREFIX}/dags`, JSON.stringify({ name: `${tag}${index}`, spec })),
    request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ name: `${tag}${index}`, spec })),
    request('PUT', `${PREFIX}/dags/fx/spec`, JSON.stringify({ spec })),
  ]);
  const expect = (req: FuzzRequest, res: FuzzResponse): string[] => {
    const body = json(res);
    if (req.path.endsWith('/validate')) {
      return res.status === 200 && body?.valid === false && body.errors?.length > 0 && body.errors.every((error: unknown) => typeof error === 'string' && error !== '') ? [] : ['validate must answer 200, valid false, with a message'];
    }
    if (req.method === 'PUT') return (res.status === 200 && body?.errors?.length > 0) || res.status === 400 ? [] : ['an edit must be refused with its errors'];
    return res.status === 400 ? [] : ['must be refused with 400'];
  };
  return { requests, expect };
}

/** Registered inside the suite that owns the uWS server, after the groups that pass on main. */
export function knownDefectTests(server: () => FuzzServer): void {
  describe('known defects (expected fixed behaviour)', () => {
    let fuzz: FuzzServer;
    before(() => {
      fuzz = server();
    });

    const check = async (requests: FuzzRequest[], expect?: (req: FuzzRequest, res: FuzzResponse) => string[]) => {
      const findings = await sendAll(fuzz.client, fuzz.home, requests, expect);
      await fuzz.restore();
      assert.ok(await fuzz.healthy(), '/health stopped answering');
      assert.deepEqual(findings.slice(0, 30), [], `${findings.length} of ${requests.length} failed`);
    };

    test('known defect 5: Object.prototype names are DAGs like any other, on every route', async () => {
      const requests: FuzzRequest[] = [];
      for (const name of PROTOTYPE_NAMES) {
        requests.push(request('POST', `${PREFIX}/dags`, JSON.stringify({ name, spec: 'steps:\n  - "true"\n' })));
        requests.push(request('POST', `${PREFIX}/dags/${name}/start`, JSON.stringify({ dagRunId: `run-${name.replace(/_/g, 'u')}` })));
        for (const route of registeredRoutes()) {
          for (const param of paramsOf(route.pattern)) {
            const values = { ...fuzz.values.plain, [param]: name };
            requests.push(request(route.method, fillPath(route.pattern, values), ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined));
          }
        }
        requests.push(request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ name, spec: 'steps:\n  - "true"\n' })));
        requests.push(request('POST', `${PREFIX}/dags/fx/start`, JSON.stringify({ dagName: name })));
        requests.push(request('GET', `${PREFIX}/dag-runs?name=${name}`), request('GET', `${PREFIX}/dags?name=${name}&tag=${name}`));
      }
      await check(requests, (req, res) => {
        // A start of a name that exists is admitted or refused for a reason (409), never an error.
        if (req.method === 'POST' && req.path.endsWith('/start') && JSON.parse(String(req.body)).dagRunId !== undefined) {
          return res.status === 200 ? [] : ['start of a created DAG must answer 200'];
        }
        return [];
      });
    });

    test('known defect 6: YAML alias expansion is bounded and refused with a message', async () => {
      const { requests, expect } = refusedEverywhere(aliasBombs(), 'alias');
      // Ordinary use of anchors may be valid or not, but must be answered.
      const ordinary = ordinaryAliases().map((spec) => request('POST', `${PREFIX}/dags/validate`, JSON.stringify({ spec })));
      await check([...requests, ...ordinary], (req, res) => (ordinary.includes(req) ? [] : expect(req, res)));
    });

    test('known defect 7: a NUL byte in a file or directory of a definition is a definition error', async () => {
      const { requests, expect } = refusedEverywhere(nulPaths(), 'nul');
      await check(requests, expect);
    });

    test('known defect 8: concurrent edits and renames of one DAG never answer 5xx', async () => {
      await fuzz.server.writeDag('race', 'steps:\n  - "true"\n');
      const puts = await Promise.all(Array.from({ length: 60 }, (_, i) =>
        fuzz.client.send(request('PUT', `${PREFIX}/dags/race/spec`, JSON.stringify({ spec: `description: edit ${i}\nsteps:\n  - "true"\n` })))));
      // Serialized writes all succeed; a fix may also refuse a racing edit with 409, never more.
      assert.deepEqual(puts.filter((res) => res.status !== 200 && res.status !== 409).map((res) => `${res.status} ${res.text}`), []);
      assert.ok(puts.some((res) => res.status === 200));
      const renames = await Promise.all(Array.from({ length: 10 }, (_, i) =>
        fuzz.client.send(request('POST', `${PREFIX}/dags/race/rename`, JSON.stringify({ newFileName: `race${i}` })))));
      const statuses = renames.map((res) => res.status);
      assert.equal(statuses.filter((status) => status === 200).length, 1, statuses.join(','));
      assert.deepEqual(statuses.filter((status) => status !== 200 && status !== 404 && status !== 409), []);
    });

    test('known defect 8 (siblings): every kind of write to one DAG and its runs at once never answers 5xx', async () => {
      const spec = 'maxActiveRuns: 3\nsteps:\n  - name: a\n    command: "true"\n';
      await fuzz.server.writeDag('mixed', spec);
      const first = await fuzz.client.send(request('POST', `${PREFIX}/dags/mixed/start`, '{}'));
      const run = `${PREFIX}/dag-runs/mixed/${JSON.parse(first.text).dagRunId}`;
      const writes = [
        request('POST', `${PREFIX}/dags/mixed/start`, '{}'), request('POST', `${PREFIX}/dags/mixed/start`, '{"dagRunId":"same"}'),
        request('POST', `${PREFIX}/dags/mixed/stop-all`, '{}'), request('POST', `${run}/stop`), request('POST', `${run}/retry`, '{}'),
        request('PATCH', `${run}/steps/a/status`, '{"status":4}'), request('POST', `${PREFIX}/dags/mixed/suspend`, '{"suspend":true}'),
        request('POST', `${PREFIX}/dags/mixed/suspend`, '{"suspend":false}'), request('PUT', `${PREFIX}/dags/mixed/spec`, JSON.stringify({ spec })),
        request('DELETE', `${PREFIX}/dags/mixed`), request('POST', `${PREFIX}/dags`, JSON.stringify({ name: 'mixed', spec })),
        request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ name: 'mixed', spec, dagRunId: 'inline-same' })),
      ];
      const failures: string[] = [];
      for (let round = 0; round < 3; round++) {
        const batch = Array.from({ length: 36 }, (_, i) => writes[(i * 5 + round) % writes.length]);
        const answers = await Promise.all(batch.map((req) => fuzz.client.send(req)));
        answers.forEach((res, i) => {
          if (res.status >= 500) failures.push(`${batch[i].method} ${batch[i].path} -> ${res.status} ${res.text}`);
        });
        await fuzz.server.writeDag('mixed', spec);
      }
      assert.ok(await fuzz.healthy());
      assert.deepEqual(failures, []);
    });

    test('known defect 9a: the reserved run id latest is refused', async () => {
      const latest = JSON.stringify({ dagRunId: 'latest' });
      const requests = [
        request('POST', `${PREFIX}/dags/fx/start`, latest),
        request('POST', `${PREFIX}/dag-runs`, JSON.stringify({ spec: 'steps:\n  - "true"\n', dagRunId: 'latest' })),
        request('POST', `${PREFIX}/dag-runs/fx/${fuzz.values.plain.dagRunId}/retry`, latest),
      ];
      await check(requests, (_req, res) => (res.status === 400 ? [] : ['the id latest must be refused with 400']));
    });

    test('known defect 9b: an empty spec is invalid', async () => {
      // An inline run without a spec is refused already (docs/api.md); an empty one must be too.
      const { requests: empty, expect } = refusedEverywhere(EMPTY_SPECS, 'empty');
      await check(empty, expect);
    });

    test('known defect 11 (uWS): HEAD on every route is answered without a body', async () => {
      const requests = registeredRoutes().map((route) => request('HEAD', fillPath(route.pattern, route.pattern.includes('sub-dag-runs') ? fuzz.values.sub : fuzz.values.plain)));
      await check(requests);
    });
  });
}
